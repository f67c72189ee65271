#!/usr/bin/env bash
# Throwaway certificates for the tls:// tests, made with the openssl command
# (Debian package openssl, installed by scripts/install-deps.sh):
#
#   tls_certs.sh DIR
#
# DIR/ca.pem            test CA (valid 2 days)
# DIR/server.pem|.key   server certificate from ca.pem for localhost, 127.0.0.1 and ::1
# DIR/client.pem|.key   client certificate from ca.pem (mutual TLS)
# DIR/other-ca.pem      an unrelated CA; other-client.pem|.key: a client certificate from it
# DIR/expired.pem       the server's key, certified by ca.pem for 2020-01-01..02 only
# DIR/self.pem|.key     a self-signed certificate for localhost (no CA knows it)
# Exit 77 (skip) when there is no openssl command.
set -eu
D=${1:?usage: tls_certs.sh DIR}
command -v openssl >/dev/null || { echo "SKIP: no openssl command (Debian: apt-get install openssl)"; exit 77; }
mkdir -p "$D"
cd "$D"
quiet() { "$@" >/dev/null 2>openssl.err || { cat openssl.err >&2; echo "tls_certs.sh: failed: $*" >&2; exit 1; }; }
key() { quiet openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1"; }
ca() { # name
    key "$1.key"
    quiet openssl req -x509 -new -key "$1.key" -out "$1.pem" -days 2 -subj "/CN=apigen test $1"
}
printf 'basicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\nsubjectAltName=DNS:localhost,IP:127.0.0.1,IP:::1\n' >server.ext
printf 'basicConstraints=CA:FALSE\nextendedKeyUsage=clientAuth\n' >client.ext
leaf() { # name ca ext cn
    key "$1.key"
    quiet openssl req -new -key "$1.key" -out "$1.csr" -subj "/CN=$4"
    quiet openssl x509 -req -in "$1.csr" -CA "$2.pem" -CAkey "$2.key" -CAcreateserial -out "$1.pem" \
        -days 2 -extfile "$3"
}
ca ca
ca other-ca
leaf server ca server.ext localhost
leaf client ca client.ext apigen-guest
leaf other-client other-ca client.ext apigen-guest
# expired: openssl ca takes explicit dates (x509 -days cannot go back)
mkdir -p cadb
: >cadb/index
echo 01 >cadb/serial
cat >ca.cnf <<CNF
[ca]
default_ca = d
[d]
database = cadb/index
serial = cadb/serial
new_certs_dir = cadb
default_md = sha256
policy = p
[p]
commonName = supplied
CNF
quiet openssl ca -batch -config ca.cnf -cert ca.pem -keyfile ca.key -in server.csr -out expired.pem \
    -startdate 20200101000000Z -enddate 20200102000000Z -extfile server.ext -notext
key self.key
quiet openssl req -x509 -new -key self.key -out self.pem -days 2 -subj /CN=localhost \
    -addext subjectAltName=DNS:localhost,IP:127.0.0.1
