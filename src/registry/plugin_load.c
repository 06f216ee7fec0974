/* plugin_load.c: sml_load_plugin, a shared library's kernel table into the registry. */
#define _XOPEN_SOURCE 700 /* realpath */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/internal.h"
#include "softmax_lab_plugin.h"

/* The registry's loader (internal.h): set once, before the command loads anything. */
static _Atomic(sml_plugin_loader_fn) LOADER;

void sml_registry_set_plugin_loader(sml_plugin_loader_fn fn) { atomic_store(&LOADER, fn); }

sml_status sml_load_plugin(const char *path, char *msg, size_t msglen) {
    if (msg && msglen) msg[0] = 0;
    sml_plugin_loader_fn loader = atomic_load(&LOADER);
    if (loader && path && *path && !sml_source_is_python(path)) return loader(path, msg, msglen);
    if (!path || !*path)
        return sml_errorf(SML_ERR_PLUGIN, msg, msglen, "plugin: no library path given");
    if (sml_source_is_python(path))
        return sml_errorf(
            SML_ERR_PLUGIN, msg, msglen,
            "%s: a Python module's kernels; run this command as python3 -m softmax_lab, "
            "which imports the module",
            path);
    /* A file that exists is opened by its absolute path (dlopen would search the library
     * path for a bare name, not the current directory), and recorded so, which is what a
     * reproducer saved from one of its kernels replays from any directory. A name that is no
     * file here is left to dlopen's search. */
    char abs[PATH_MAX];
    struct stat st;
    const char *open_as = path;
    if (stat(path, &st) == 0) {
        if (S_ISDIR(st.st_mode))
            return sml_errorf(SML_ERR_PLUGIN, msg, msglen,
                              "%s: is a directory, not a shared library", path);
        if (!realpath(path, abs))
            return sml_errorf(SML_ERR_PLUGIN, msg, msglen, "%s: cannot resolve the path: %s", path,
                              strerror(errno));
        open_as = abs;
    } else if (strchr(path, '/')) {
        return sml_errorf(SML_ERR_PLUGIN, msg, msglen, "%s: cannot open: %s", path,
                          strerror(errno));
    }
    dlerror();
    void *dl = dlopen(open_as, RTLD_NOW | RTLD_LOCAL);
    if (!dl) {
        const char *why = dlerror();
        return sml_errorf(SML_ERR_PLUGIN, msg, msglen, "%s: not a loadable shared library: %s",
                          path, why ? why : "dlopen failed");
    }
    dlerror();
    void *sym = dlsym(dl, SML_PLUGIN_SYMBOL);
    const char *why = dlerror();
    if (why || !sym) {
        dlclose(dl);
        return sml_errorf(SML_ERR_PLUGIN, msg, msglen,
                          "%s: no symbol " SML_PLUGIN_SYMBOL
                          " (a plugin exports `const sml_kernel *" SML_PLUGIN_SYMBOL
                          "(size_t *count, unsigned *abi_version)` with C linkage)",
                          path);
    }
    sml_plugin_kernels_fn entry;
    memcpy(&entry, &sym, sizeof entry); /* object pointer to function pointer, as dlsym needs */
    size_t count = 0;
    unsigned abi = 0;
    const sml_kernel *table = entry(&count, &abi);
    int already = 0;
    sml_status s = sml_registry_add(table, count, abi, open_as, open_as, dl, &already, msg, msglen);
    /* dlopen counts references: a library loaded twice is closed once here. */
    if (s != SML_OK || already) dlclose(dl);
    return s;
}
