/* file_read.c: see file_read.h. */
#include "io/file_read.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/internal.h"

static const char *kind_of(mode_t m) {
    if (S_ISDIR(m)) return "a directory, not a file";
    if (S_ISFIFO(m))
        return "a FIFO (named pipe), not a regular file: save the data to a file first";
    if (S_ISSOCK(m)) return "a socket, not a regular file";
    if (S_ISCHR(m) || S_ISBLK(m)) return "a device, not a regular file";
    return "not a regular file";
}

sml_status sml_file_open_read(const char *path, FILE **out, int64_t *size, char *why, size_t n) {
    *out = NULL;
    *size = 0;
    /* O_NONBLOCK: opening a FIFO with no writer returns at once instead of waiting. */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        struct stat st;
        if (errno == EISDIR || (stat(path, &st) == 0 && S_ISDIR(st.st_mode)))
            return sml_errorf(SML_ERR_IO, why, n, "%s", kind_of(S_IFDIR));
        return sml_errorf(SML_ERR_IO, why, n, "cannot open: %s", strerror(errno));
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        return sml_errorf(SML_ERR_IO, why, n, "cannot stat: %s", strerror(e));
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return sml_errorf(SML_ERR_IO, why, n, "%s", kind_of(st.st_mode));
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0) fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    FILE *f = fdopen(fd, "rb");
    if (!f) {
        int e = errno;
        close(fd);
        return sml_errorf(SML_ERR_IO, why, n, "cannot open: %s", strerror(e));
    }
    *out = f;
    *size = (int64_t)st.st_size;
    return SML_OK;
}

sml_status sml_file_read_all(const char *path, size_t max, char **buf, size_t *len, char *why,
                             size_t n) {
    *buf = NULL;
    *len = 0;
    FILE *f;
    int64_t size;
    sml_status s = sml_file_open_read(path, &f, &size, why, n);
    if (s != SML_OK) return s;
    if (size < 0 || (uint64_t)size > max) {
        fclose(f);
        return sml_errorf(SML_ERR_FORMAT, why, n, "%lld bytes, more than the %zu this reader takes",
                          (long long)size, max);
    }
    /* Read up to max + 1 bytes whatever the size said: the file may grow while it is read. */
    size_t cap = (size_t)size + 1, got = 0;
    char *b = malloc(cap + 1);
    while (b) {
        got += fread(b + got, 1, cap - got, f);
        if (got < cap || cap > max) break;
        size_t ncap = cap * 2 > max + 1 ? max + 1 : cap * 2;
        char *nb = realloc(b, ncap + 1);
        if (!nb) {
            free(b);
            b = NULL;
            break;
        }
        b = nb;
        cap = ncap;
    }
    int bad = ferror(f);
    fclose(f);
    if (!b) return sml_errorf(SML_ERR_OUT_OF_MEMORY, why, n, "out of memory");
    if (bad) {
        free(b);
        return sml_errorf(SML_ERR_IO, why, n, "read error");
    }
    if (got > max) {
        free(b);
        return sml_errorf(SML_ERR_FORMAT, why, n, "more than the %zu bytes this reader takes", max);
    }
    b[got] = 0;
    *buf = b;
    *len = got;
    return SML_OK;
}

sml_status sml_file_errorf(sml_status s, char *err, size_t n, const char *path, const char *fmt,
                           ...) {
    if (!err || !n) return s;
    char reason[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(reason, sizeof reason, fmt, ap);
    va_end(ap);
    size_t pl = strlen(path), rl = strlen(reason);
    /* Room for the path: what the reason and ": " leave, and never under 24 characters. */
    size_t room = n > rl + 3 ? n - rl - 3 : 0;
    if (room < 24) room = 24;
    if (pl <= room)
        snprintf(err, n, "%s: %s", path, reason);
    else
        snprintf(err, n, "...%s: %s", path + pl - (room - 3), reason);
    return s;
}
