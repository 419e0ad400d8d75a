//! `cinterrupts exec`'s preload library (issue 14): loaded into an
//! unmodified, dynamically linked program with `LD_PRELOAD`, it sees the
//! program's direct I/O from inside (the calls TOS 4.1.1 marks) and gives
//! each request the marks the kernel would: the default marks of Table 1 or
//! the authors' basis kernel, the application's RWF_URGENT / RWF_BARRIER
//! flags, then `exec`'s marking rules (by operation, thread name, file
//! path and process title: `wire::marks`, the facts learnt in `facts`).
//!
//! This first step observes: every call still goes to the kernel untouched,
//! and each process writes what it saw (calls and requests by kind and
//! mark) to `$CINTERRUPTS_EXEC_OUT/PID.json` when it exits; `exec` adds the
//! processes up. Routing the requests through the emulator's device is the
//! next step. Without `$CINTERRUPTS_EXEC_OUT` the library does nothing.
//!
//! Only direct I/O is counted (a descriptor opened with O_DIRECT, checked
//! with `fcntl(F_GETFL)` per call, since flags can change with F_SETFL).

// In layers, bottom first; a module uses only modules of the layers
// before its own (issue 38 item 1; `crates/cli/tests/layers.rs` fails on
// a module cycle):
// - the bottom: the kernel calls the library makes for itself (`kernel`),
//   the global state (`state`), the facts the rules ask for (`facts`);
// - classification (`classify`): a request's marks and critical tag;
// - the program's descriptors (`fd`), then routing through the shared
//   region (`route`);
// - one module per interface: the blocking calls (`blocking`), libaio
//   (`aio`), io_uring (`uring`);
// - the record at exit and the process's hooks (`report`);
// - the interposed C symbols (`intercept`).
mod aio;
mod blocking;
mod classify;
mod facts;
mod fd;
mod intercept;
mod kernel;
mod report;
mod route;
mod state;
mod uring;
