/* Issue 38 item 6: what `exec --device` must not change, seen by a program
 * of its own (exec_conformance.rs runs it natively, under exec and under
 * exec --device optane and compares every line it prints).
 *
 *   twin fault FILE  each of the eight vectored forms (preadv, pwritev,
 *                    preadv2, pwritev2, libaio IOCB_CMD_PREADV/PWRITEV,
 *                    io_uring READV/WRITEV) on O_DIRECT, whose second
 *                    buffer is PROT_NONE or unmapped; pread/pwrite of two
 *                    pages, the second PROT_NONE; the file's blocks after.
 *   twin dirty FILE  O_DIRECT writes of every form after a read: the
 *                    file's dirty pages, then its dirty and writeback
 *                    pages after fsync (cachestat, Linux 6.5), st_blocks
 *                    and st_size.
 *   twin fds FILE    the number the next open() gets after O_DIRECT reads,
 *                    then under a lowered RLIMIT_NOFILE, and how many
 *                    descriptors the program can open under it.
 *
 * libaio through libaio.so.1's symbols (as a program linked to it calls
 * them), io_uring through syscall(2) (as liburing does), with the kernel's
 * uapi headers only. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/aio_abi.h>
#include <linux/io_uring.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#define BLOCK 4096

static int (*aio_setup)(int, aio_context_t *);
static int (*aio_submit)(aio_context_t, long, struct iocb **);
static int (*aio_getevents)(aio_context_t, long, long, struct io_event *, struct timespec *);
static int (*aio_destroy)(aio_context_t);

static void load_libaio(void) {
    void *h = dlopen("libaio.so.1", RTLD_NOW | RTLD_GLOBAL);
    if (!h) { fprintf(stderr, "libaio.so.1 is needed: run scripts/setup\n"); exit(3); }
    aio_setup = dlsym(RTLD_DEFAULT, "io_setup");
    aio_submit = dlsym(RTLD_DEFAULT, "io_submit");
    aio_getevents = dlsym(RTLD_DEFAULT, "io_getevents");
    aio_destroy = dlsym(RTLD_DEFAULT, "io_destroy");
    if (!aio_setup || !aio_submit || !aio_getevents || !aio_destroy) exit(3);
}

/* One libaio request: its event's res (a failed submit: 1000 - errno). */
static long aio_one(int fd, int op, void *buf, long n, long off) {
    aio_context_t ctx = 0;
    if (aio_setup(4, &ctx) != 0) return -1000;
    struct iocb cb;
    memset(&cb, 0, sizeof cb);
    cb.aio_fildes = fd;
    cb.aio_lio_opcode = op;
    cb.aio_buf = (unsigned long)buf;
    cb.aio_nbytes = n;
    cb.aio_offset = off;
    struct iocb *p = &cb;
    int r = aio_submit(ctx, 1, &p);
    long res;
    if (r != 1) {
        res = 1000 + (r < 0 ? r : 0);
    } else {
        struct io_event ev;
        while (aio_getevents(ctx, 1, 1, &ev, NULL) != 1) {}
        res = (long)ev.res;
    }
    aio_destroy(ctx);
    return res;
}

/* One io_uring request on a ring of its own: its CQE's res. */
static long uring_one(int fd, int op, void *addr, unsigned n, long off) {
    struct io_uring_params p;
    memset(&p, 0, sizeof p);
    int rfd = syscall(SYS_io_uring_setup, 4, &p);
    if (rfd < 0) return -2000;
    size_t sqsz = p.sq_off.array + p.sq_entries * sizeof(unsigned);
    size_t cqsz = p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe);
    char *sq = mmap(0, sqsz, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, rfd,
                    IORING_OFF_SQ_RING);
    char *cq = mmap(0, cqsz, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, rfd,
                    IORING_OFF_CQ_RING);
    struct io_uring_sqe *sqes =
        mmap(0, p.sq_entries * sizeof(struct io_uring_sqe), PROT_READ | PROT_WRITE,
             MAP_SHARED | MAP_POPULATE, rfd, IORING_OFF_SQES);
    if (sq == MAP_FAILED || cq == MAP_FAILED || sqes == MAP_FAILED) return -2001;
    unsigned *tail = (unsigned *)(sq + p.sq_off.tail);
    unsigned *mask = (unsigned *)(sq + p.sq_off.ring_mask);
    unsigned *arr = (unsigned *)(sq + p.sq_off.array);
    unsigned t = *tail;
    struct io_uring_sqe *s = &sqes[t & *mask];
    memset(s, 0, sizeof *s);
    s->opcode = op;
    s->fd = fd;
    s->addr = (unsigned long)addr;
    s->len = n;
    s->off = off;
    s->user_data = 7;
    arr[t & *mask] = t & *mask;
    __atomic_store_n(tail, t + 1, __ATOMIC_RELEASE);
    if (syscall(SYS_io_uring_enter, rfd, 1, 1, IORING_ENTER_GETEVENTS, NULL, 0) < 0)
        return -2002;
    unsigned *chead = (unsigned *)(cq + p.cq_off.head);
    unsigned *ctail = (unsigned *)(cq + p.cq_off.tail);
    unsigned *cmask = (unsigned *)(cq + p.cq_off.ring_mask);
    while (__atomic_load_n(ctail, __ATOMIC_ACQUIRE) == *chead) {}
    struct io_uring_cqe *c = (struct io_uring_cqe *)(cq + p.cq_off.cqes);
    long res = c[*chead & *cmask].res;
    __atomic_store_n(chead, *chead + 1, __ATOMIC_RELEASE);
    close(rfd);
    return res;
}

static long ret(long r) { return r < 0 ? -errno : r; }

static char *aligned(size_t n, int byte) {
    void *p;
    if (posix_memalign(&p, BLOCK, n)) exit(4);
    memset(p, byte, n);
    return p;
}

static int open_or_die(const char *path, int flags) {
    int fd = open(path, flags, 0644);
    if (fd < 0) { perror(path); exit(5); }
    return fd;
}

/* Two pages, the second made unreachable: PROT_NONE, or unmapped. */
static char *half(int unmapped) {
    char *p = mmap(0, 2 * BLOCK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) exit(6);
    memset(p, 'w', BLOCK);
    if (unmapped ? munmap(p + BLOCK, BLOCK) : mprotect(p + BLOCK, BLOCK, PROT_NONE)) exit(6);
    return p;
}

static void fault(const char *file) {
    int fd = open_or_die(file, O_RDWR | O_DIRECT);
    char *good = aligned(2 * BLOCK, 'g');
    /* A read that moves data: under exec --device, its twin is open. */
    printf("pread good %ld\n", ret(pread(fd, good, BLOCK, 0)));
    for (int unmapped = 0; unmapped < 2; unmapped++) {
        const char *how = unmapped ? "unmapped" : "PROT_NONE";
        char *p = half(unmapped);
        long at = BLOCK;
        /* First, while nothing else can have been mapped into the hole. */
        printf("%s pwrite %ld\n", how, ret(pwrite(fd, p, 2 * BLOCK, at)));
        printf("%s pread %ld\n", how, ret(pread(fd, p, 2 * BLOCK, at)));
        /* A hole the libaio and io_uring rings cannot fill: the page at
         * 0, under vm.mmap_min_addr (4096 on this VM, 65536 by default). */
        char *second = unmapped ? NULL : p + BLOCK;
        struct iovec iov[2] = {{p, BLOCK}, {second, BLOCK}};
        /* The writes first, from a buffer of 'w' (the file holds 'a'):
         * whatever of it lands shows in the blocks printed at the end. */
        memset(p, 'w', BLOCK);
        printf("%s pwritev %ld\n", how, ret(pwritev(fd, iov, 2, at)));
        printf("%s pwritev2 %ld\n", how, ret(pwritev2(fd, iov, 2, at, 0)));
        printf("%s libaio PWRITEV %ld\n", how, aio_one(fd, IOCB_CMD_PWRITEV, iov, 2, at));
        printf("%s io_uring WRITEV %ld\n", how, uring_one(fd, IORING_OP_WRITEV, iov, 2, at));
        printf("%s libaio PREADV %ld\n", how, aio_one(fd, IOCB_CMD_PREADV, iov, 2, at));
        printf("%s io_uring READV %ld\n", how, uring_one(fd, IORING_OP_READV, iov, 2, at));
        /* What the program's buffer holds after them: this kernel's
         * O_DIRECT fills no page of a call it fails with EFAULT. (After a
         * blocking read that failed so, exec's may differ: fd::read_twin.) */
        printf("%s first page %c\n", how, p[0]);
        printf("%s preadv %ld\n", how, ret(preadv(fd, iov, 2, at)));
        printf("%s preadv2 %ld\n", how, ret(preadv2(fd, iov, 2, at, 0)));
    }
    /* The second buffer reachable: the whole call, each form. */
    struct iovec ok[2] = {{good, BLOCK}, {good + BLOCK, BLOCK}};
    printf("good preadv %ld\n", ret(preadv(fd, ok, 2, 2 * BLOCK)));
    printf("good io_uring READV %ld\n", uring_one(fd, IORING_OP_READV, ok, 2, 2 * BLOCK));
    printf("good libaio PREADV %ld\n", aio_one(fd, IOCB_CMD_PREADV, ok, 2, 2 * BLOCK));
    close(fd);
    int b = open_or_die(file, O_RDONLY);
    char c;
    for (int k = 0; pread(b, &c, 1, (long)k * BLOCK) == 1; k++) printf("block %d %c\n", k, c);
}

/* Dirty and writeback pages of the file (cachestat, Linux 6.5); -1
 * without it. */
static long dirty(int fd, int writeback) {
    struct { unsigned long long off, len; } range = {0, 0};
    struct { unsigned long long cache, dirty, writeback, evicted, recently_evicted; } st;
    memset(&st, 0, sizeof st);
    if (syscall(451, fd, &range, &st, 0) != 0) return -1;
    return (long)(st.dirty + (writeback ? st.writeback : 0));
}

static void dirtied(const char *file) {
    int fd = open_or_die(file, O_RDWR | O_DIRECT);
    char *b = aligned(4 * BLOCK, 'd');
    struct iovec iov[2] = {{b, BLOCK}, {b + BLOCK, BLOCK}};
    printf("pread %ld\n", ret(pread(fd, b, BLOCK, 0)));
    printf("pwrite %ld\n", ret(pwrite(fd, b, BLOCK, 0)));
    printf("pwritev %ld\n", ret(pwritev(fd, iov, 2, 2 * BLOCK)));
    printf("pwritev2 %ld\n", ret(pwritev2(fd, iov, 2, 4 * BLOCK, 0)));
    printf("libaio PWRITEV %ld\n", aio_one(fd, IOCB_CMD_PWRITEV, iov, 2, 6 * BLOCK));
    printf("io_uring WRITEV %ld\n", uring_one(fd, IORING_OP_WRITEV, iov, 2, 8 * BLOCK));
    /* Past the end, leaving a hole: allocation as the kernel makes it. */
    printf("pwrite past the end %ld\n", ret(pwrite(fd, b, 2 * BLOCK, 20 * BLOCK)));
    printf("preadv %ld\n", ret(preadv(fd, iov, 2, 0)));
    /* Dirty pages: none natively; under exec --device none either (the
     * twin's write-back is started before each write returns). Pages
     * under write-back: none natively, some under exec --device while this
     * disk writes them (timing-dependent: stderr, not compared). */
    printf("dirty pages %ld\n", dirty(fd, 0));
    fprintf(stderr, "writeback pages %ld\n", dirty(fd, 1) - dirty(fd, 0));
    printf("fsync %d\n", fsync(fd));
    printf("dirty or writeback pages after fsync %ld\n", dirty(fd, 1));
    struct stat st;
    fstat(fd, &st);
    printf("st_size %ld st_blocks %ld\n", (long)st.st_size, (long)st.st_blocks);
}

static void fds(const char *file) {
    char *b = aligned(BLOCK, 'r');
    int d1 = open_or_die(file, O_RDONLY | O_DIRECT);
    printf("pread %ld\n", ret(pread(d1, b, BLOCK, 0)));
    int n1 = open_or_die("/dev/null", O_RDONLY);
    printf("next open %d\n", n1 - d1);
    int d2 = open_or_die(file, O_RDWR | O_DIRECT);
    printf("pread %ld\n", ret(pread(d2, b, BLOCK, 0)));
    int n2 = open_or_die("/dev/null", O_RDONLY);
    printf("next open %d\n", n2 - d1);
    /* Lower the limit just above what the program holds: a twin made
     * now must not take one of its numbers. */
    struct rlimit lim;
    getrlimit(RLIMIT_NOFILE, &lim);
    lim.rlim_cur = (rlim_t)n2 + 8;
    printf("setrlimit %d\n", setrlimit(RLIMIT_NOFILE, &lim));
    int d3 = open_or_die(file, O_RDONLY | O_DIRECT);
    printf("pread %ld\n", ret(pread(d3, b, BLOCK, 0)));
    printf("pread on the first %ld\n", ret(pread(d1, b, BLOCK, 0)));
    int more = 0, last = -1;
    for (;;) {
        int f = open("/dev/null", O_RDONLY);
        if (f < 0) { printf("then %s\n", strerror(errno)); break; }
        last = f;
        more++;
    }
    printf("opened under the limit %d, the last %d\n", more, last - d1);
}

int main(int argc, char **argv) {
    if (argc != 3) return 2;
    setvbuf(stdout, NULL, _IONBF, 0);
    load_libaio();
    if (!strcmp(argv[1], "fault")) fault(argv[2]);
    else if (!strcmp(argv[1], "dirty")) dirtied(argv[2]);
    else if (!strcmp(argv[1], "fds")) fds(argv[2]);
    else return 2;
    return 0;
}
