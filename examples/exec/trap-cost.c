/* us per io_uring_enter, for exec's trap of inline io_uring calls
   (crates/exec/README.md, io_uring; RESULTS.md): an inline `syscall`
   instruction (as liburing 2.3 and fio 3.33 make it) and glibc's syscall(),
   both on descriptor -1 (EBADF: the kernel's answer, passed on), and
   getppid for scale. cc -O2 -fPIE -pie -o trap-cost trap-cost.c; run
   natively, then under cinterrupts exec --device optane -o /dev/null --. */
#include <stdio.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>
static long inline_enter(long fd) {
    long r; register long r10 __asm__("r10") = 0; register long r8 __asm__("r8") = 0; register long r9 __asm__("r9") = 0;
    __asm__ volatile ("syscall" : "=a"(r) : "a"((long)SYS_io_uring_enter), "D"(fd), "S"(0L), "d"(0L), "r"(r10), "r"(r8), "r"(r9) : "rcx", "r11", "memory");
    return r;
}
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e9 + t.tv_nsec; }
int main(void) {
    const int n = 200000;
    double a = now();
    for (int i = 0; i < n; i++) inline_enter(-1);
    double b = now();
    for (int i = 0; i < n; i++) syscall(SYS_io_uring_enter, -1, 0, 0, 0, 0, 0);
    double c = now();
    for (int i = 0; i < n; i++) syscall(SYS_getppid);
    double d = now();
    printf("inline io_uring_enter %.3f us, syscall() io_uring_enter %.3f us, getppid %.3f us\n",
           (b - a) / n / 1e3, (c - b) / n / 1e3, (d - c) / n / 1e3);
    return 0;
}
