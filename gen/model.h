/* The API model: what the header says (filled by clang_front.c from libclang)
 * plus what the spec adds (filled by spec.c + check.c). Emitters read only
 * this; they never look at libclang or YAML.
 *
 * Ownership: everything hangs off one api_model and is freed with it
 * (model_free). Strings are heap copies. Arrays are (ptr, count) pairs grown
 * with the helpers in util.h. */
#ifndef APIGEN_MODEL_H
#define APIGEN_MODEL_H

#include <stddef.h>
#include <stdint.h>

/* Where something came from: a header declaration or a spec node. */
typedef struct src_loc {
    const char *file; /* interned; NULL when unknown */
    unsigned line;
    unsigned col;
} src_loc;

/* ---- C types, from libclang canonical types ------------------------------ */

#define TYPE_KIND_LIST(X)                                                      \
    X(TY_VOID, "void")                                                         \
    X(TY_BOOL, "bool")                                                         \
    X(TY_SINT, "signed integer")                                               \
    X(TY_UINT, "unsigned integer")                                             \
    X(TY_FLOAT, "floating point")                                              \
    X(TY_ENUM, "enum")                                                         \
    X(TY_RECORD, "struct or union")                                            \
    X(TY_POINTER, "pointer")                                                   \
    X(TY_FNPTR, "function pointer")                                            \
    X(TY_ARRAY, "array")                                                       \
    X(TY_OTHER, "unsupported type")

typedef enum type_kind {
#define X(k, s) k,
    TYPE_KIND_LIST(X)
#undef X
} type_kind;

const char *type_kind_name(type_kind k);

struct record_def;
struct enum_def;
struct fn_sig;

/* One C type as a parameter, field or return value uses it. */
typedef struct type_info {
    type_kind kind;
    char *spelling;       /* as written, typedef kept: "fooContext", "const void *" */
    char *canonical;      /* canonical spelling: "struct S_st *" */
    char *typedef_name;   /* outermost typedef name, or NULL: "fooContext" */
    uint64_t size;        /* bytes; 0 for void / incomplete */
    uint64_t align;
    int is_const;         /* the type itself is const-qualified */
    struct type_info *pointee;     /* TY_POINTER / TY_ARRAY: element type */
    uint64_t array_len;            /* TY_ARRAY: element count */
    struct record_def *record;     /* TY_RECORD: layout (NULL if incomplete) */
    struct enum_def *enm;          /* TY_ENUM */
    struct fn_sig *fn;             /* TY_FNPTR: the pointed-to function type */
    /* added by the front end */
    char *canonical_unqual;        /* canonical spelling without top-level const/volatile */
    int is_char;                   /* plain `char` (signed or not), for strings */
    int is_signed;                 /* TY_SINT, or TY_ENUM whose underlying type is signed */
} type_info;

typedef struct field_def {
    char *name;
    type_info *type;
    uint64_t offset; /* bytes from the start of the record */
    src_loc loc;
} field_def;

typedef struct record_def {
    char *name;      /* "struct fooDeviceInfo" / typedef name when anonymous */
    int is_union;
    int complete;
    uint64_t size, align;
    field_def *fields;
    size_t nfields;
    int has_pointers; /* any field (recursively) is a pointer / fn pointer */
    int as_bytes;     /* listed in `types.bytes`: copied as bytes although it holds pointers */
    src_loc loc;
} record_def;

typedef struct enum_const {
    char *name;
    int64_t value;
} enum_const;

typedef struct enum_def {
    char *name;          /* "enum fooStatus" or typedef name when anonymous */
    type_info *underlying;
    enum_const *consts;
    size_t nconsts;
    src_loc loc;
} enum_def;

typedef struct typedef_def {
    char *name;
    type_info *type;     /* the typedef's type: typedef_name = name, canonical = underlying */
    src_loc loc;
} typedef_def;

/* Object-like macros whose expansion is one integer literal (version macros). */
typedef struct macro_def {
    char *name;
    int64_t value;
    src_loc loc;
} macro_def;

/* ---- what the spec adds to a parameter ----------------------------------- */

/* How a parameter travels. check.c decides exactly one kind per parameter,
 * from an annotation or a default; an undecidable pointer is an error. */
#define PARAM_KIND_LIST(X)                                                     \
    X(PK_VALUE, "value")       /* scalar, enum, bool, float: by value */       \
    X(PK_STRUCT, "struct")     /* plain-data struct by value (bytes) */        \
    X(PK_HANDLE, "handle")     /* opaque handle translated per client */       \
    X(PK_DEVPTR, "device")     /* device address: opaque 64-bit value */       \
    X(PK_IN, "in")             /* pointer to `count` elements sent */          \
    X(PK_OUT, "out")           /* pointer to `count` elements received */      \
    X(PK_INOUT, "inout")       /* both */                                      \
    X(PK_STRING, "string")     /* NUL-terminated input string */               \
    X(PK_CALLBACK, "callback") /* function pointer invoked later in guest */   \
    X(PK_USERDATA, "userdata") /* opaque pointer handed back to a callback */  \
    X(PK_COND, "conditional")  /* `if` cond then `then_ann` else `else_ann` */ \
    X(PK_IGNORE, "ignore")     /* sent as NULL / 0: reserved parameters */

typedef enum param_kind {
#define X(k, s) k,
    PARAM_KIND_LIST(X)
#undef X
} param_kind;

const char *param_kind_name(param_kind k);

/* What the elements behind a PK_IN/OUT/INOUT pointer are. */
#define ELEM_KIND_LIST(X)                                                      \
    X(EK_BYTES, "plain data") /* scalars / plain structs: copied as bytes */   \
    X(EK_HANDLE, "handle")    /* array of handles, translated one by one */    \
    X(EK_DEVPTR, "device")    /* array of device addresses */                  \
    X(EK_STRING, "string")    /* array of NUL-terminated strings (char**) */

typedef enum elem_kind {
#define X(k, s) k,
    ELEM_KIND_LIST(X)
#undef X
} elem_kind;

const char *elem_kind_name(elem_kind k);

/* A validated C expression over the function's parameters, e.g.
 * "num_entries * sizeof(cl_device_id)" or "*size_ret". `text` is re-emitted
 * from tokens (identifiers checked against parameter names, enum constants,
 * macros and type names), so it is safe to paste into generated C on both
 * sides: stub and handler both have every parameter as a local of the same
 * name and type. */
typedef struct expr {
    char *text;
    int uses_out_deref; /* reads `*p` of an out parameter: only valid after the call */
    int uses_in_deref;  /* count/bytes reading `*p` of an in/inout parameter before the call */
    src_loc loc;
} expr;

/* A handle type and the values (enum constants, integer macros or integers,
 * as written) that select it: `elem_by` and `handle_keys`. */
typedef struct handle_case {
    char *handle_type;
    char **values;
    size_t nvalues;
} handle_case;

typedef struct param_ann {
    param_kind kind;
    elem_kind elem;          /* PK_IN/OUT/INOUT */
    type_info *elem_type;    /* the pointee, const stripped (void -> 1-byte bytes) */
    expr *count;             /* element count (NULL: 1 element) */
    int count_is_bytes;      /* `bytes:` was given instead of `count:` */
    expr *count_after;       /* PK_OUT/INOUT: elements valid after the call, e.g. "*size_ret"; clamped to count */
    int nullable;            /* NULL is allowed and travels as "absent" */
    int terminated;          /* zero-terminated list: count is found by scanning (PK_IN only) */
    int64_t terminator;      /* value that ends the list */
    unsigned term_stride;    /* elements per entry (2 for key/value property lists) */
    char *handle_type;       /* PK_HANDLE, EK_HANDLE: name of the spec's handle type */
    int creates;             /* out handle(s) created by this call: register on the server */
    int guest_id;            /* PK_OUT, one created handle of an async/async_if function: the
                                guest assigns its id (apigen_guest_id), the server binds it */
    int destroys;            /* handle destroyed by this call on success: forget it;
                                PK_DEVPTR: the device range it lies in is freed */
    int destroys_off;        /* `destroys: false` given: not even as a destroy function */
    expr *extent;            /* PK_DEVPTR `bytes:`: [p, p + extent) must be the client's;
                                PK_OUT/INOUT of EK_DEVPTR with `creates: {bytes:}`: the size of
                                each device range the call creates */
    int dev_unchecked;       /* PK_DEVPTR, `checked: false`: never range-checked (types.device) */
    char *map_fn;            /* PK_DEVPTR: the stub sends map_fn(value) (a guest function of the
                                spec's sources: const void *F(const void *)) */
    int retains;             /* handle retained by this call on success: one more reference */
    int ordinal;             /* a device ordinal (`ordinal: true`): an integer in (the guest's
                                global index, routed to its server's local one) or an out
                                pointer to one (the server's, mapped back): check_servers.c */
    /* PK_OUT/INOUT plain bytes whose elements are handles for some values of
     * another (value) parameter: an info query whose answer for one key is a list of handles */
    char *elem_by_param;
    handle_case *elem_by;
    size_t nelem_by;
    /* `elem_by` (docs/spec.md): the value of elem_by_param chooses what the
     * elements are. elem_by: handle types (out: real -> id after the call;
     * in/inout: id -> real in a copy before it); elem_by_types: plain C types
     * (handle_type holds the type's text); elem_by_device: values whose
     * elements are device addresses (in/inout: NULL or the client's memory).
     * With `count:` the count is in elements of the chosen type: `count` is
     * then the byte size, elem_by_count the element count, and a value
     * listed nowhere is refused. With `bytes:` elem_by_count is NULL. */
    handle_case *elem_by_types;
    size_t nelem_by_types;
    char **elem_by_device;
    size_t nelem_by_device;
    expr *elem_by_count;
    /* PK_IN plain bytes, `reads: {guest: F, handle: [TYPE, ...]}`: the
     * stub reads only F(h, k) bytes of the caller's buffer (h: the first
     * argument of the k-th listed handle type) into a zeroed local of the
     * buffer's constant `bytes:` size, which travels: a scalar whose C type
     * a descriptor's data type decides */
    char *reads_fn;
    char *reads_param;
    unsigned reads_index;
    uint64_t reads_max;
    /* terminated key/value lists: keys whose value is a handle */
    handle_case *handle_keys;
    size_t nhandle_keys;
    /* PK_CALLBACK */
    char *user_data_param;   /* the parameter passed back to the callback */
    int cb_user_data_index;  /* which argument of the callback type is its user data */
    int cb_once;             /* invoked at most once: entry freed after delivery */
    expr *cb_once_if;        /* ... or when this holds at the call (`once: EXPR`) */
    /* PK_IN/PK_OUT plain bytes, `stream: {host: F, chunk: N, min: M}`: a
     * buffer of at least min bytes streams to/from the host hook
     * F(apigen_stream *, params...) in chunks of N bytes */
    char *stream_host;
    uint64_t stream_chunk, stream_min;
    /* PK_OUT/INOUT plain data, `out_on_error: [E, ...]`: also sent back when the
     * call returns one of these errors (a size query may answer
     * "insufficient size" with the count it needs) */
    char **out_on_error;
    size_t nout_on_error;
    /* PK_COND from `space: {state: S, host: H, device: D}`: the state's
     * value decides (then: host memory as annotated, else: a device address) */
    char *space_state;
    char *space_host, *space_device;   /* constants as written */
    int64_t space_host_v, space_device_v;
    /* PK_COND */
    expr *cond;
    struct param_ann *then_ann, *else_ann;
    src_loc loc;             /* the annotation; {0} when a default decided */
} param_ann;

typedef struct param_def {
    char *name;
    type_info *type;
    src_loc loc;        /* header declaration */
    param_ann ann;      /* filled by check.c */
} param_def;

/* `types.handles.H.state.NAME`: a value of each handle of type H that the
 * guest tracks from the setter's successful calls (a library's pointer mode),
 * which decides where `space:` parameters live. The server checks the
 * guest's value against the real library's getter before the call. */
typedef struct state_def {
    char *name;           /* C identifier: the stub's and handler's `st_<name>_` */
    char *initial;        /* the value of a new handle, as written */
    int64_t initial_v;
    char *set_fn, *set_param;   /* the setter and its value parameter */
    char *get_fn, *get_param;   /* the getter and its out parameter */
    type_info *type;      /* the getter's out pointee (an integer or enum) */
    src_loc loc;
} state_def;

/* A state value a function's call carries (one per `space:` state used):
 * the handle parameter it is read from and the state of its type. */
typedef struct state_use {
    size_t param;         /* index of the handle parameter */
    char *handle_type;
    unsigned slot;        /* index in the handle type's states */
} state_use;

/* ---- functions ------------------------------------------------------------ */

#define FN_MODE_LIST(X)                                                        \
    X(FN_FORWARD, "forwarded")                                                 \
    X(FN_LOCAL, "local")       /* implemented in the stub by hand-written C */ \
    X(FN_CUSTOM, "custom")     /* hand-written guest and/or host code */       \
    X(FN_UNSUPPORTED, "unsupported")

typedef enum fn_mode {
#define X(k, s) k,
    FN_MODE_LIST(X)
#undef X
} fn_mode;

const char *fn_mode_name(fn_mode m);

/* A function type: declared functions and function-pointer (callback) types. */
typedef struct fn_sig {
    type_info *ret;
    param_def *params;
    size_t nparams;
    int variadic;
} fn_sig;

/* api.thread_state_effects: what a call of the API may do to the thread state
 * that other APIs of its family keep (docs/spec.md). */
enum {
    TSTATE_EFFECTS_ANY = 0,  /* default: every call forgets it */
    TSTATE_EFFECTS_DECLARED, /* only calls with a `thread_state:` set/forget entry forget it */
    TSTATE_EFFECTS_NONE      /* no call changes it */
};

/* One entry of a function's `thread_state:` (check_thread_state.c): what the call does to
 * the per-thread values the guest tracks (api.thread_state), by slot index. */
typedef struct state_entry {
    expr *cond;            /* NULL: always */
    int *set_slot;         /* after success: slot = the parameter's value, or ... */
    char **set_param;      /* ... *param when set_deref (an out pointer to one value) */
    int *set_deref;
    size_t nset;
    int *forget;           /* after the call, whatever it returned: unknown on this thread */
    size_t nforget;
    int forget_all;        /* after the call: every thread's values unknown */
    int answer_slot;       /* -1 none; else answered from the slot when known ... */
    char *answer_param;    /* ... into this out pointer to one value; learned on success */
    int exchange_slot;     /* -1 none; else the value in *exchange_param is swapped with the
                              slot's: answered and queued when known, learned on success */
    char *exchange_param;  /* an inout pointer to one enum value */
} state_entry;

typedef struct function_def {
    char *name;
    fn_sig sig;
    src_loc loc;         /* header declaration */
    char *header;        /* which header file (for the coverage report) */
    /* from the spec (check.c) */
    fn_mode mode;
    char *reason;        /* FN_UNSUPPORTED */
    char *custom_guest;  /* FN_CUSTOM: C function in specs/<api>/ replacing the stub body */
    char *custom_host;   /* FN_CUSTOM: C function in specs/<api>/ replacing the handler */
    int async;           /* always async */
    expr *async_if;      /* async when this is true at run time */
    char *async_check;   /* guest function bool F(<params>): queued only when it says so */
    char *async_vouch;   /* guest function bool F(<params>): the library accepts the call for
                            sure (queued either way; a vouched one keeps the last error known) */
    char *async_unless;  /* guest function bool F(<params>): true: this call goes synchronously
                            (a state of the process, not a vouch: the last error stays unknown) */
    int async_repeats;   /* queued only when a sync call with the same checked values succeeded */
    int keeps_deferred;  /* never returns an earlier async call's error (the next call does) */
    char *error_out;     /* parameter receiving the error code (errcode_ret) */
    char *ret_handle;    /* return value is a handle of this type ... */
    int ret_creates;     /* ... created by this call */
    expr *on_failure;    /* a plain return value: what the stub returns when it cannot make the call */
    int call_id;         /* wire call id, stable: index in sorted order of forwarded/custom fns */
    char *symbol_version;/* ELF version node (NULL: api.symbol_version) */
    int wrap_guest;      /* FN_FORWARD: the forwarder is <api>_fwd_<name> (hidden); the
                            spec's sources export <name> and call it */
    char *wrap_host;     /* FN_FORWARD: the handler calls this (cx, args...) instead of <name> */
    int internal;        /* a call of the spec's own headers: forwarded, never exported */
    int last_error;      /* api.errors.last_error: 1 its `get`, 2 its `peek` */
    char *limits;        /* `limits:` what of it does not work (coverage report) */
    char *variant_of;    /* a symbol variant (api.variants) of this function ... */
    char *variant_suffix;/* ... named <variant_of><variant_suffix> */
    src_loc ann_loc;     /* the spec entry, {0} if none */
    /* `gather:` (several servers): asked of every server in order, the
     * counts summed and the lists concatenated (check_servers.c) */
    char *gather_count;  /* out pointer to an integer: the number of items */
    char *gather_list;   /* out array of handles (NULL: a count only) ... */
    char *gather_cap;    /* ... with room for this integer parameter's value */
    int gather_all;      /* `gather: {}`: asked of every server, no items (an init or a
                            shutdown): success when one succeeds */
    int gather_first;    /* `gather: {first: true}`: asked of each server in order until one
                            succeeds (a lookup by name): that answer */
    int selects;         /* `selects: true`: on success the calling thread's calls that name
                            no server go to the server of its ordinal argument */
    char *undecided;     /* apigen --undecided-unsupported: why the defaults could not decide
                            this unannotated function (it became FN_UNSUPPORTED) */
    state_use *state_uses; /* state values the call sends (`space:` parameters) */
    size_t nstate_uses;
    int state_role;      /* a `state:` setter (1) or getter (2) of ... */
    size_t state_hparam; /* ... the handle parameter ... */
    size_t state_vparam; /* ... and the value parameter (set) or out pointer (get) ... */
    char *state_htype;   /* ... of this handle type's ... */
    unsigned state_slot; /* ... state */
    char *privileged;    /* `privileged: "reason"` (needs api.privileged): the server runs it
                            only when started with --<api.privileged.option>, else returns
                            api.privileged.error and logs the reason once */
    /* `cache: session` (check_cache.c): the out-values depend only on the
     * inputs for the life of a session, so the guest keeps each answer per
     * server session and answers the same request again without a round trip */
    int cache;
    expr *cache_if;      /* kept only when this holds (NULL: always) */
    char **cache_errors; /* errors kept too (success always is) */
    size_t ncache_errors;
    expr *cache_keep_if; /* `cache.keep_if`: kept only when the answer satisfies this */
    int cache_group;     /* `cache.group`: index in api.cache_groups (-1: none) */
    int *cache_tstate;   /* `cache.thread_state`: api.thread_state slots whose values the */
    size_t ncache_tstate;/* thread holds key the answer too (kept only while known) */
    int *cache_forget;   /* `cache_forget:` groups (api.cache_groups indexes) whose kept */
    size_t ncache_forget;/* answers the call makes unknown, whatever it returned */
    /* `cache: {contents: [P...], ids: [Q...]}` (a memoized query): per
     * parameter 0, or MEMO_CONTENTS (keyed by the handle's contents the
     * guest holds) or MEMO_ID (keyed by its id); NULL: not memoized */
    unsigned char *memo;
    /* `contents: {sets: P, key: [K...]}`: the call sets part of handle P's
     * contents (types.handles.H.contents): contents_sets is P's index + 1
     * (0: none); contents_key[i]: parameter i is a key of the part */
    size_t contents_sets;
    unsigned char *contents_key;
    unsigned char *contents_unknown; /* `contents: {unknown: [P...]}`: per parameter, 1: the call
                                        changes what it holds in a way the guest does not record */
    state_entry *state;  /* `thread_state:` (api.thread_state) */
    size_t nstate;
} function_def;

enum { MEMO_CONTENTS = 1, MEMO_ID = 2 };

/* Whether a function has a call id and a handler on the server: forwarded,
 * or custom with host code. A custom function with only guest code is
 * hand-written guest code over other calls (internal ones, usually). */
static inline int fn_has_call(const function_def *f)
{
    return f->mode == FN_FORWARD || (f->mode == FN_CUSTOM && f->custom_host);
}


/* ---- spec-level settings --------------------------------------------------- */

typedef struct handle_type_def {
    char *name;           /* typedef name in the header: "fooContext" */
    type_info *type;
    char *destroy_fn;     /* one-argument function that releases it (client cleanup) */
    int64_t *passthrough; /* values passed as-is, never translated (0, special stream values) */
    size_t npassthrough;
    unsigned tag;         /* index, used as the wire type tag */
    int unknown_as_null;  /* an unknown id reaches the real library as NULL */
    char **also;          /* handle types whose ids are accepted in this one's place */
    size_t nalso;
    src_loc also_loc;
    int contents;         /* `contents: true`: every change goes through the guest (check_cache.c) */
    struct state_def *states;  /* `state:` values the guest tracks per handle */
    size_t nstates;
    src_loc loc;
} handle_type_def;



typedef struct api_settings {
    char *name;             /* "foo": C identifier */
    char **headers;         /* as given in the spec: api.headers, then api.helper_headers */
    size_t nheaders;
    size_t napi_headers;    /* headers[0..napi_headers) are the API's own (header_features.c) */
    unsigned char *header_optional; /* per header: {optional: true}; once parsed, the
                                       absent ones are gone from headers[] */
    char **include_dirs;
    size_t ninclude_dirs;
    char **defines;         /* "NAME" or "NAME=VALUE" */
    size_t ndefines;
    char **clang_args;      /* extra raw arguments */
    size_t nclang_args;
    char **select_prefix;   /* functions taken: name starts with one of these ... */
    size_t nselect_prefix;
    char *select_regex;     /* ... or matches this POSIX ERE */
    char **exclude;         /* names never taken */
    size_t nexclude;
    char *soname;           /* "libfoo.so.1" */
    char *symbol_version;   /* "libfoo.so.1" (version node name) */
    char **version_nodes;   /* later nodes, in order (each inherits the one before) */
    size_t nversion_nodes;
    char *error_type;       /* "fooStatus" */
    struct enum_def *error_names; /* api.errors.names: the error enum, named in <api>_wire.h */
    type_info *error_ty;
    char *success;          /* constant names or integer literals */
    char *unsupported;
    char *connection_lost;
    char *invalid_handle;
    char *invalid_value;
    char *out_of_memory;
    char *missing;          /* errors.missing: a function the server's real library lacks
                               answers this (the server references them weakly); NULL: none */
    int64_t success_v, unsupported_v, connection_lost_v, invalid_handle_v,
        invalid_value_v, out_of_memory_v, missing_v;
    int async_errors_next_call; /* deferred async errors are returned by the next sync call */
    char *last_error_get;   /* api.errors.last_error: reads and clears the thread's last error */
    char *last_error_peek;  /* ... reads it only */
    src_loc last_error_loc;
    char **sources;         /* hand-written C in specs/<api>/ compiled into the stub/server */
    size_t nsources;
    char **extra_symbols;   /* symbols exported beyond the header's functions (custom) */
    size_t nextra_symbols;
    char **private_symbols; /* exported, declared in no header, signature unknown: the stub
                               answers `unsupported` and logs once (api.private_symbols) */
    size_t nprivate_symbols;
    char **private_reasons; /* per private symbol: its group's `unsupported:` reason, or NULL */
    int device_checked;     /* `types.device`: device addresses are per-client ranges */
    int pointers_device;    /* `defaults.pointers: device`: an undecided data pointer is a
                               device address */
    char *versioned_member; /* `types.versioned.member`: a non-const pointer to a struct whose
                               first member has this name is inout by default (the version
                               the caller set must reach the library); other structs: out */
    char *family;           /* api.family: stubs of one family share one session; a handle
                               type that points to a struct has a family-wide type tag */
    int isolate_process;    /* `isolation: process`: the server's default is a process per session */
    int forward_output;     /* `forward_output: true`: the session process's stdout goes to its client */
    char *hobj_define;      /* api.handle_objects: the stub built with this macro defined ... */
    char *hobj_first;       /* ... makes handles objects whose first member is this symbol's
                               value (runtime/apigen_hobj.h) */
    char *device_destroy;   /* its `destroy:`: frees a device address a vanished client left */
    src_loc device_loc;
    char **variant_defines; /* api.variants: the headers parsed again with these defines ... */
    size_t nvariant_defines;
    char **variant_suffixes;/* ... declare <fn><suffix> for some functions: symbol variants */
    size_t nvariant_suffixes;
    char *proc_header;      /* api.proc_table: a header of function-pointer typedefs ... */
    char *proc_pattern;     /* ... named like "PFN_{name}_v{version}" (+ a variant suffix) */
    src_loc proc_loc;
    char **thread_state;    /* api.thread_state: per-thread values the guest tracks (slots) */
    size_t nthread_state;
    char **cache_groups;    /* api.cache_groups: names (family-wide) of kept answers that
                               calls of the family's APIs may make unknown (`cache_forget:`) */
    size_t ncache_groups;
    int tstate_effects;     /* api.thread_state_effects: what this API's calls do to the values
                               other APIs of its family keep (TSTATE_EFFECTS_*) */
    unsigned tstate_lazy_mask; /* api.thread_state_lazy: slots (bits) whose value ... */
    int64_t tstate_lazy[8]; /* ... any call of another API of the family may replace on its
                               own: forgotten when one begins */
    char *ordinals;         /* api.ordinals: the function that counts one server's devices
                               (`gather:` of a count only): device ordinals need it */
    char *version_macro;    /* api.version_macro: the headers' integer version macro ... */
    int64_t version;        /* ... and its value (0 when the spec names none) */
    char *priv_option;      /* api.privileged.option: the server flag (without "--") that
                               lets `privileged:` functions run ... */
    char *priv_error;       /* ... and the error they return without it */
    int64_t priv_error_v;
    src_loc priv_loc;       /* api.privileged, {0} when absent */
} api_settings;

/* api.proc_table: one typedef of the header names (name, version, variant)
 * and the function that has its type (gen/proc_table.c). */
typedef struct proc_entry {
    char *name;          /* the name an application asks for: "fooAlloc" */
    long version;        /* from the typedef's name */
    unsigned suffix;     /* 0, or 1 + the index of its api.variants suffix */
    char *symbol;        /* the function: "fooAlloc_v2" */
    char *typedef_name;  /* "PFN_fooAlloc_v3020" */
} proc_entry;

/* types.sizes: the bytes each value of an integer or enum type stands for
 * (a data-type enum: 4 for its float, ...), which size expressions read as
 * `size_of(param)`; a value not listed is 0. Emitted into <api>_wire.h as
 * <api>_size_of_<type>(), for the generated code and the spec's own C. */
typedef struct size_entry {
    char *value;      /* an enum constant or integer macro of the headers */
    uint64_t bytes;
} size_entry;

typedef struct size_table {
    char *type;               /* the typedef (or enum) name as the spec wrote it */
    const type_info *ti;      /* its type: parameters match it by canonical type */
    size_entry *entries;      /* in the spec's order */
    size_t nentries;
    src_loc loc;
} size_table;

typedef struct api_model {
    api_settings api;
    function_def *functions;   /* every selected function, sorted by name */
    size_t nfunctions;
    record_def **records;
    size_t nrecords;
    enum_def **enums;
    size_t nenums;
    typedef_def *typedefs;
    size_t ntypedefs;
    proc_entry *procs;         /* api.proc_table, by name then version */
    size_t nprocs;
    macro_def *macros;
    size_t nmacros;
    handle_type_def *handles;
    size_t nhandles;
    size_table *sizes;         /* types.sizes */
    size_t nsizes;
    char *spec_path;           /* as given on the command line */
    int undecided_unsupported; /* an unannotated function the defaults cannot decide becomes
                                  unsupported (a warning) instead of an error */
    char **unmatched;          /* function entries of the spec that match nothing */
    src_loc *unmatched_locs;
    size_t nunmatched;
    uint64_t fingerprint;      /* FNV-1a 64 over the canonical model text */
    char **features;           /* APIGEN_HAS_*: what the API's headers declare, sorted */
    size_t nfeatures;
    void *arena;               /* owned memory (implementation detail) */
} api_model;

function_def *model_find_function(api_model *m, const char *name);
/* Same canonical return and parameter types (and variadic-ness): 1, else 0. */
int fn_sig_equal(const fn_sig *a, const fn_sig *b);
typedef_def *model_find_typedef(api_model *m, const char *name);
handle_type_def *model_find_handle(api_model *m, const char *name);
/* The types.sizes table of a C type (canonical comparison, through typedefs), or NULL. */
const size_table *model_size_table_of(const api_model *m, const type_info *t);
/* An enum constant anywhere in the headers (owner: its enum), or NULL. */
enum_const *model_find_enum_const(const api_model *m, const char *name, enum_def **owner);
macro_def *model_find_macro(const api_model *m, const char *name);
/* 1 when the API's headers declare the feature (APIGEN_HAS_..., features.c). */
int model_has_feature(const api_model *m, const char *name);
/* The handle type a C type is, through typedefs (canonical comparison), or NULL. */
handle_type_def *model_handle_of(api_model *m, const type_info *t);
/* An integer handle type narrower than an id (an FFT library's int plans): the guest
 * keeps an id's low 32 bits and the server widens them with its session's
 * salt (APIGEN_HT_NARROW). */
static inline int handle_is_narrow(const handle_type_def *h)
{
    return h->type && h->type->kind != TY_POINTER && h->type->size && h->type->size < 8;
}
void model_free(api_model *m);
/* The server's type tag of handle type h: its index, or in a family API
 * (api.family) a hash of what it is, so that every member of the family
 * gives one C type the same tag (handle_family_key). */
unsigned model_handle_tag(const api_model *m, const handle_type_def *h);
/* In a family API: a pointer to a struct is known by that struct's name
 * ("struct S_st": two APIs' typedefs of S_st * are one type); any other
 * handle type (an integer) by "<api>.<typedef>", its own. *key: malloc'd. */
char *handle_family_key(const api_model *m, const handle_type_def *h);
/* FNV-1a 64 over a canonical text of the validated model (fingerprint.c). */
uint64_t model_fingerprint(const api_model *m);

#endif
