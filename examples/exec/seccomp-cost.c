/* ns per system call, for exec's seccomp filter (crates/exec/README.md):
   ./cost getppid|pread|io_submit N, natively and under cinterrupts exec.
   getppid, pread (4 KiB, page cache) or io_submit (nr 0), each an inline
   `syscall` instruction (no PLT, no library). */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/syscall.h>
#include <linux/aio_abi.h>
static long raw6(long n, long a1, long a2, long a3, long a4, long a5, long a6) {
    long r; register long r10 __asm__("r10") = a4; register long r8 __asm__("r8") = a5; register long r9 __asm__("r9") = a6;
    __asm__ volatile ("syscall" : "=a"(r) : "a"(n), "D"(a1), "S"(a2), "d"(a3), "r"(r10), "r"(r8), "r"(r9) : "rcx", "r11", "memory");
    return r;
}
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e9 + t.tv_nsec; }
int main(int argc, char **argv) {
    long n = atol(argv[2]);
    static char buf[4096];
    int fd = open("/etc/services", O_RDONLY);
    aio_context_t ctx = 0;
    raw6(SYS_io_setup, 8, (long)&ctx, 0, 0, 0, 0);
    double t0 = now();
    for (long i = 0; i < n; i++) {
        if (!strcmp(argv[1], "getppid")) raw6(SYS_getppid, 0, 0, 0, 0, 0, 0);
        else if (!strcmp(argv[1], "pread")) raw6(SYS_pread64, fd, (long)buf, 4096, 0, 0, 0);
        else raw6(SYS_io_submit, ctx, 0, 0, 0, 0, 0);
    }
    printf("%s %.1f ns/call\n", argv[1], (now() - t0) / n);
    return 0;
}
