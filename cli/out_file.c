/* out_file.c: temporary file + rename for the CLI's outputs (see out_file.h). */
#include "out_file.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "prop/npy.h"

/* A write past the file-size limit (ulimit -f) raises SIGXFSZ, whose default action kills
 * the process before it can remove its temporary file; ignored, the write fails with EFBIG
 * and is handled like any other failed write. */
static void no_sigxfsz(void) { signal(SIGXFSZ, SIG_IGN); }

/* The temporary file's name: beside the target, so the rename stays on one file system. */
static int tmp_name(const char *path, char *buf, size_t n) {
    int w = snprintf(buf, n, "%s.tmp%ld", path, (long)getpid());
    return w > 0 && (size_t)w < n ? 0 : -1;
}

static int write_through(const char *path) {
    struct stat st;
    return lstat(path, &st) == 0 && !S_ISREG(st.st_mode);
}

int sml_out_open(sml_out_file *o, const char *path, char *err, size_t errlen) {
    no_sigxfsz();
    memset(o, 0, sizeof *o);
    if (snprintf(o->path, sizeof o->path, "%s", path) >= (int)sizeof o->path ||
        (!write_through(path) && tmp_name(path, o->tmp, sizeof o->tmp) != 0)) {
        snprintf(err, errlen, "%.200s...: path too long", path);
        return -1;
    }
    o->f = fopen(o->tmp[0] ? o->tmp : path, o->tmp[0] ? "wx" : "w");
    if (!o->f) {
        snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
        return -1;
    }
    return 0;
}

int sml_out_commit(sml_out_file *o, char *err, size_t errlen) {
    errno = 0;
    int bad = ferror(o->f) != 0;
    bad |= fflush(o->f) != 0;
    bad |= fclose(o->f) != 0;
    o->f = NULL;
    bad = bad || (o->tmp[0] && rename(o->tmp, o->path) != 0);
    if (!bad) return 0;
    int e = errno;
    if (o->tmp[0]) remove(o->tmp);
    snprintf(err, errlen, "cannot write %s: %s (%s)", o->path, e ? strerror(e) : "write error",
             o->tmp[0] ? "nothing written" : "written in place, incomplete");
    return -1;
}

void sml_out_abort(sml_out_file *o) {
    if (o->f) fclose(o->f);
    o->f = NULL;
    if (o->tmp[0]) remove(o->tmp);
}

int sml_out_npy(const char *path, sml_dtype dt, int ndim, const int64_t *shape, const void *data,
                char *err, size_t errlen) {
    no_sigxfsz();
    char tmp[4160], side_tmp[4200], side[4200];
    if (tmp_name(path, tmp, sizeof tmp) != 0) {
        snprintf(err, errlen, "%.200s...: path too long", path);
        return -1;
    }
    sml_npy_sidecar_path(tmp, side_tmp, sizeof side_tmp);
    sml_npy_sidecar_path(path, side, sizeof side);
    char why[1024] = "";
    errno = 0;
    int ok = sml_npy_write(tmp, dt, ndim, shape, data, why, sizeof why) == SML_OK;
    /* The sidecar first: a bf16 .npy is never in place without it. */
    if (ok && dt == SML_BF16) ok = rename(side_tmp, side) == 0;
    if (ok) ok = rename(tmp, path) == 0;
    if (ok && dt != SML_BF16) remove(side); /* a stale sidecar would retype the new file */
    if (!ok) {
        int e = errno;
        remove(tmp);
        remove(side_tmp);
        snprintf(err, errlen, "cannot write %s: %s (nothing written)", path,
                 e ? strerror(e) : why);
        return -1;
    }
    return 0;
}
