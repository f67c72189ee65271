#!/usr/bin/env python3
"""Some members of a wheel on PyPI without downloading the whole wheel.

A wheel is a zip file, and files.pythonhosted.org answers HTTP range
requests: this reads the zip's central directory from the end of the file,
then only the members asked for (each a range of the file), checks each
against the wheel's RECORD (sha256 and size, as pip would) and writes it
under DEST with its path inside the wheel. A cuDNN wheel is ~600-900 MB;
its headers and its loader library libcudnn.so.9 are ~1 MB.

    wheel-members.py REQ DEST PATTERN...
      REQ      NAME==VERSION: an exact version (9.0.0.312) or a prefix (12.9.*);
               the highest release that matches, for this machine
               (manylinux, this CPU)
      DEST     the folder the members are written under
      PATTERN  fnmatch patterns over the paths in the wheel
               ('*/include/*', '*/lib/libcudnn.so.9')

The index is PIP_INDEX_URL (default https://pypi.org/simple), read with its
JSON form (PEP 691). Prints what it fetched (bytes) on stderr.
Exit status: 0 done, 1 a failure (no such release, a member whose hash
differs from RECORD, a pattern that matches nothing), 77 the index or the
file cannot be reached (offline).
"""
import base64
import fnmatch
import hashlib
import io
import json
import os
import platform
import re
import sys
import urllib.error
import urllib.request
import zipfile

OFFLINE = 77
TIMEOUT = float(os.environ.get("PIP_DEFAULT_TIMEOUT", "60"))


class Offline(Exception):
    pass


def get(url, headers=None):
    req = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=TIMEOUT) as r:
            return r.status, r.headers, r.read()
    except urllib.error.HTTPError:
        raise
    except (urllib.error.URLError, OSError) as e:
        raise Offline(f"{url}: {e}")


class RangeFile(io.RawIOBase):
    """A seekable read-only file over HTTP range requests, read ahead in
    blocks (zipfile makes many small reads)."""

    BLOCK = 1 << 20

    def __init__(self, url, size):
        self.url, self.size, self.pos, self.fetched = url, size, 0, 0
        self.cache_at, self.cache = -1, b""

    def seekable(self):
        return True

    def readable(self):
        return True

    def tell(self):
        return self.pos

    def seek(self, off, whence=0):
        base = {0: 0, 1: self.pos, 2: self.size}[whence]
        self.pos = max(0, base + off)
        return self.pos

    def _fetch(self, start, end):
        status, _, body = get(self.url, {"Range": f"bytes={start}-{end - 1}"})
        if status != 206 or len(body) != end - start:
            raise OSError(f"{self.url}: asked bytes {start}-{end - 1}, got status {status}, "
                          f"{len(body)} bytes (the server must answer range requests)")
        self.fetched += len(body)
        return body

    def read(self, n=-1):
        if n is None or n < 0:
            n = self.size - self.pos
        n = min(n, self.size - self.pos)
        if n <= 0:
            return b""
        c0, c1 = self.cache_at, self.cache_at + len(self.cache)
        if not (c0 <= self.pos and self.pos + n <= c1):
            # a read that goes on from the last block reads further ahead
            # (a member's data), up to 64 MiB a request
            ahead = min(2 * len(self.cache), 64 << 20) if self.pos == c1 else self.BLOCK
            start = self.pos
            end = min(self.size, start + max(n, ahead, self.BLOCK))
            self.cache_at, self.cache = start, self._fetch(start, end)
        off = self.pos - self.cache_at
        out = self.cache[off:off + n]
        self.pos += len(out)
        return out

    def readinto(self, b):
        data = self.read(len(b))
        b[:len(data)] = data
        return len(data)


def vkey(v):
    return [int(x) if x.isdigit() else -1 for x in re.split(r"[.+-]", v)]


def pick_wheel(name, spec):
    index = os.environ.get("PIP_INDEX_URL", "https://pypi.org/simple").rstrip("/")
    norm = re.sub(r"[-_.]+", "-", name).lower()
    url = f"{index}/{norm}/"
    try:
        _, _, body = get(url, {"Accept": "application/vnd.pypi.simple.v1+json"})
    except urllib.error.HTTPError as e:
        sys.exit(f"wheel-members: {url}: HTTP {e.code}: no such project?")
    try:
        files = json.loads(body)["files"]
    except (ValueError, KeyError):
        sys.exit(f"wheel-members: {url}: the index did not answer in its JSON form (PEP 691)")
    arch = platform.machine()
    exact = not spec.endswith(".*")
    prefix = spec[:-2] if not exact else spec
    best = None
    for f in files:
        fn = f["filename"]
        if not fn.endswith(".whl") or "manylinux" not in fn or not fn.endswith(f"_{arch}.whl"):
            continue
        if f.get("yanked"):
            continue
        ver = fn.split("-")[1]
        if exact:
            # 9.0.0.312 also matches 9.0.0.312.post1 (a rebuilt wheel)
            if ver != spec and not ver.startswith(spec + ".post"):
                continue
        elif not ver.startswith(prefix + ".") or ".dev" in ver:
            continue
        if best is None or vkey(ver) > vkey(best[0]):
            best = (ver, f)
    if best is None:
        sys.exit(f"wheel-members: {url}: no {arch} manylinux wheel of {name}=={spec}")
    return best[1]


def main():
    if len(sys.argv) < 4 or "==" not in sys.argv[1]:
        sys.exit(__doc__)
    req, dest, patterns = sys.argv[1], sys.argv[2], sys.argv[3:]
    name, spec = req.split("==", 1)
    try:
        f = pick_wheel(name, spec)
        size = f.get("size")
        if not size:
            _, h, _ = get(f["url"], {"Range": "bytes=0-0"})
            size = int(h["Content-Range"].split("/")[1])
        rf = RangeFile(f["url"], size)
        z = zipfile.ZipFile(io.BufferedReader(rf, buffer_size=1 << 16))
        names = z.namelist()
        record = [n for n in names if n.endswith(".dist-info/RECORD")]
        hashes = {}
        if record:
            for line in z.read(record[0]).decode().splitlines():
                parts = line.rsplit(",", 2)
                if len(parts) == 3 and parts[1].startswith("sha256="):
                    hashes[parts[0]] = (parts[1][7:], int(parts[2]))
        status = 0
        for p in patterns:
            hits = [n for n in names if fnmatch.fnmatch(n, p) and not n.endswith("/")]
            if not hits:
                print(f"wheel-members: {f['filename']}: nothing matches {p}", file=sys.stderr)
                status = 1
            for n in hits:
                # streamed to the file (a library may be hundreds of MB)
                out = os.path.join(dest, n)
                os.makedirs(os.path.dirname(out), exist_ok=True)
                h, size_n = hashlib.sha256(), 0
                with z.open(n) as src, open(out + ".part", "wb") as o:
                    while True:
                        chunk = src.read(1 << 20)
                        if not chunk:
                            break
                        h.update(chunk)
                        size_n += len(chunk)
                        o.write(chunk)
                want = hashes.get(n)
                got = base64.urlsafe_b64encode(h.digest()).rstrip(b"=").decode()
                if want is None or want != (got, size_n):
                    os.unlink(out + ".part")
                    print(f"wheel-members: {f['filename']}: {n}: not as its RECORD says "
                          f"({want} vs {got},{size_n})", file=sys.stderr)
                    return 1
                os.replace(out + ".part", out)
        print(f"wheel-members: {f['filename']}: fetched {rf.fetched} of {size} bytes",
              file=sys.stderr)
        return status
    except Offline as e:
        print(f"wheel-members: cannot reach the package index: {e}", file=sys.stderr)
        return OFFLINE


if __name__ == "__main__":
    sys.exit(main())
