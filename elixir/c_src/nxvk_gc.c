/* nxvk_gc: a device tensor's lifetime as a BEAM resource.
 *
 * A resource holds a server pid and a handle.  When the last Elixir term
 * referring to it is garbage collected, the destructor sends
 * {:nxvk_gc, handle} to the server, which frees the handle through the port.
 * Nothing else happens here: no GPU code runs in the BEAM, so a driver crash
 * still only kills the port process.  release/1 disarms the resource (the
 * tensor was freed explicitly); the destructor then sends nothing. */
#include <erl_nif.h>
#include <stdint.h>

typedef struct {
    ErlNifPid server;
    uint64_t handle;
    volatile int armed; /* 1 until release/1 or the destructor */
} gc_ref;

static ErlNifResourceType *gc_type;
static ERL_NIF_TERM atom_nxvk_gc, atom_ok, atom_already;

static void gc_dtor(ErlNifEnv *caller, void *obj)
{
    (void)caller;
    gc_ref *r = obj;
    if (!__atomic_exchange_n(&r->armed, 0, __ATOMIC_ACQ_REL))
        return;
    ErlNifEnv *env = enif_alloc_env();
    if (!env)
        return;
    ERL_NIF_TERM msg = enif_make_tuple2(env, atom_nxvk_gc, enif_make_uint64(env, r->handle));
    enif_send(NULL, &r->server, env, msg);
    enif_free_env(env);
}

static int load(ErlNifEnv *env, void **priv, ERL_NIF_TERM info)
{
    (void)priv;
    (void)info;
    gc_type = enif_open_resource_type(env, NULL, "nxvk_gc_ref", gc_dtor, ERL_NIF_RT_CREATE, NULL);
    atom_nxvk_gc = enif_make_atom(env, "nxvk_gc");
    atom_ok = enif_make_atom(env, "ok");
    atom_already = enif_make_atom(env, "already_released");
    return gc_type ? 0 : 1;
}

/* make(server_pid, handle) -> ref */
static ERL_NIF_TERM make(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[])
{
    (void)argc;
    ErlNifPid pid;
    ErlNifUInt64 h;
    if (!enif_get_local_pid(env, argv[0], &pid) || !enif_get_uint64(env, argv[1], &h))
        return enif_make_badarg(env);
    gc_ref *r = enif_alloc_resource(gc_type, sizeof *r);
    if (!r)
        return enif_raise_exception(env, enif_make_atom(env, "no_memory"));
    r->server = pid;
    r->handle = h;
    r->armed = 1;
    ERL_NIF_TERM t = enif_make_resource(env, r);
    enif_release_resource(r);
    return t;
}

/* release(ref) -> :ok the first time, :already_released after */
static ERL_NIF_TERM release(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[])
{
    (void)argc;
    gc_ref *r;
    if (!enif_get_resource(env, argv[0], gc_type, (void **)&r))
        return enif_make_badarg(env);
    return __atomic_exchange_n(&r->armed, 0, __ATOMIC_ACQ_REL) ? atom_ok : atom_already;
}

/* armed?(ref) -> boolean */
static ERL_NIF_TERM armed(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[])
{
    (void)argc;
    gc_ref *r;
    if (!enif_get_resource(env, argv[0], gc_type, (void **)&r))
        return enif_make_badarg(env);
    return enif_make_atom(env, __atomic_load_n(&r->armed, __ATOMIC_ACQUIRE) ? "true" : "false");
}

static ErlNifFunc funcs[] = {
    {"make", 2, make, 0},
    {"release", 1, release, 0},
    {"armed?", 1, armed, 0},
};

ERL_NIF_INIT(Elixir.Nxvk.GC, funcs, load, NULL, NULL, NULL)
