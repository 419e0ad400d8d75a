//! The device: the emulated NVMe controller, as a thread of its own
//! (TOS 4.2.1, Fig. 16: the paper's emulator polls the queues from a
//! dedicated core and sends IPIs to the target core).
//!
//! [`Device::start`] pins the controller's loop (`controller.rs`: SQ fetch,
//! backend, CQ post, the policy of each CQ, interrupt raise) to its CPU and
//! returns a [`DeviceHandle`]; [`DeviceHandle::stop`] ends it and returns
//! what it did. Any host that writes the queue pairs' SQs and reaps their
//! CQs can drive it: the job workers through the driver, or another.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use policy::Policy;

use crate::backend::Backend;
use crate::config::DeviceConfig;
use crate::error::EmuError;
use crate::queue::QueuePair;
use crate::sys::{self, Clock};

mod controller;
mod gaps;

use controller::Probe;
pub use controller::{depth_bounds, depth_bucket, Device, DeviceStats, Ingress, DEPTH_BUCKETS};

/// Wraps a queue pair's strategy once built
/// ([`Device::start_with_ingress_wrapped`]).
pub type WrapPolicy<'a> = dyn Fn(Box<dyn Policy>) -> Box<dyn Policy> + 'a;

/// What a stopped device hands back.
#[derive(Clone, Debug)]
pub struct DeviceReport {
    pub stats: DeviceStats,
    /// The gaps between consecutive posts to one CQ while the recording
    /// was open, ns (a gap of 0: posted in the same pass).
    pub gaps: Histogram<u64>,
}

impl Device {
    /// Starts the device thread on `cfg.cpu`, serving `queues` (one policy
    /// instance per queue pair) with `backend`. Interrupt raise times are
    /// read from `clock`, which the driver must share to measure delivery.
    /// Fails when the policy does not build, or the thread cannot start or
    /// be pinned; nothing is left running then.
    pub fn start(
        cfg: &DeviceConfig,
        clock: Clock,
        backend: Box<dyn Backend>,
        queues: Vec<Arc<QueuePair>>,
    ) -> Result<DeviceHandle, EmuError> {
        Device::start_inner(cfg, clock, backend, queues, None, None)
    }

    /// As [`Device::start`], with `ingress` polled at each pass for
    /// submissions of hosts in other processes.
    pub fn start_with_ingress(
        cfg: &DeviceConfig,
        clock: Clock,
        backend: Box<dyn Backend>,
        queues: Vec<Arc<QueuePair>>,
        ingress: Box<dyn Ingress>,
    ) -> Result<DeviceHandle, EmuError> {
        Device::start_inner(cfg, clock, backend, queues, Some(ingress), None)
    }

    /// As [`Device::start_with_ingress`], each queue pair's policy passed
    /// through `wrap` once built: a host that wants to watch what the
    /// strategy is given and when it fires (`exec`'s per-mark fire counts)
    /// wraps it without the controller knowing.
    pub fn start_with_ingress_wrapped(
        cfg: &DeviceConfig,
        clock: Clock,
        backend: Box<dyn Backend>,
        queues: Vec<Arc<QueuePair>>,
        ingress: Box<dyn Ingress>,
        wrap: &WrapPolicy<'_>,
    ) -> Result<DeviceHandle, EmuError> {
        Device::start_inner(cfg, clock, backend, queues, Some(ingress), Some(wrap))
    }

    fn start_inner(
        cfg: &DeviceConfig,
        clock: Clock,
        backend: Box<dyn Backend>,
        queues: Vec<Arc<QueuePair>>,
        ingress: Option<Box<dyn Ingress>>,
        wrap: Option<&WrapPolicy<'_>>,
    ) -> Result<DeviceHandle, EmuError> {
        let policies = (0..queues.len())
            // Queue q raises vector q + 1, as Linux's nvme-pci numbers
            // them (a per-vector plan, `feature09`, reads it).
            .map(|q| {
                policy::build_for_vector(&cfg.policy, (q + 1) as u16)
                    .map_err(|e| EmuError::Config(e.to_string()))
            })
            .map(|p| {
                p.map(|p| match wrap {
                    Some(w) => w(p),
                    None => p,
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let mut device = Device::new(
            queues,
            policies,
            backend,
            cfg.irq_delivery,
            cfg.recording.clone(),
        );
        device.ingress = ingress;
        let probe = device.probe.clone();
        let backend = device.describe();
        let stop = Arc::new(AtomicBool::new(false));
        let cpu = cfg.cpu;
        let (tx, rx) = std::sync::mpsc::channel();
        let stop2 = stop.clone();
        let hurry = Arc::new(AtomicBool::new(false));
        let hurry2 = hurry.clone();
        let thread = std::thread::Builder::new()
            .name("cint-device".into())
            .spawn(move || {
                let pinned = sys::pin_to(cpu);
                let ok = pinned.is_ok();
                let _ = tx.send(pinned);
                if !ok {
                    return None;
                }
                let stats = device.run(&clock, &stop2, &hurry2);
                Some(DeviceReport {
                    stats,
                    gaps: device.into_gaps(),
                })
            })
            .map_err(|e| EmuError::Config(format!("cannot start the device thread: {e}")))?;
        let pinned = rx
            .recv()
            .map_err(|_| EmuError::Config("the device thread died at start".into()))?;
        if let Err(e) = pinned {
            let _ = thread.join();
            return Err(EmuError::Config(format!(
                "cannot pin the device thread to CPU {cpu}: {e}"
            )));
        }
        Ok(DeviceHandle {
            backend,
            probe,
            stop,
            hurry,
            thread: Some(thread),
        })
    }
}

/// The running device thread. Dropping it stops the thread too, so a host
/// that fails half way leaves no CPU spinning.
pub struct DeviceHandle {
    backend: String,
    probe: Arc<Probe>,
    stop: Arc<AtomicBool>,
    hurry: Arc<AtomicBool>,
    thread: Option<JoinHandle<Option<DeviceReport>>>,
}

impl DeviceHandle {
    /// The backend, as `file:/tmp/x (io_uring, O_DIRECT, 256 MiB)`.
    pub fn describe(&self) -> &str {
        &self.backend
    }

    /// From now on, what the backend holds finishes at the device's next
    /// pass instead of at its time: a null device's requests no longer wait
    /// out their latency. For the requests left in flight once the measured
    /// part is over, which nobody times (issue 12: with `null:100h`, a run
    /// would otherwise wait 100 hours past its runtime).
    pub fn hurry(&self) {
        self.hurry.store(true, Ordering::Relaxed);
    }

    /// The device's own view (its counts, each SQ's head against its
    /// doorbell, where the backend's commands stand), as its thread writes
    /// it at its next pass; waits for it at most `wait`, and says so if the
    /// thread did not answer (a thread that does not run its passes).
    pub fn probe(&self, wait: Duration) -> String {
        *self.probe.answer.lock().expect("probe lock") = None;
        self.probe.wanted.store(true, Ordering::Relaxed);
        let start = Instant::now();
        loop {
            if let Some(view) = self.probe.answer.lock().expect("probe lock").take() {
                return view;
            }
            if start.elapsed() > wait {
                return format!(
                    "device: its thread did not answer in {} ms",
                    wait.as_millis()
                );
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    /// Stops the device thread and returns what it did. Call it once every
    /// request has been delivered: commands still in flight are dropped.
    pub fn stop(mut self) -> Result<DeviceReport, EmuError> {
        self.halt()
            .ok_or_else(|| EmuError::Config("the device thread panicked".into()))
    }

    fn halt(&mut self) -> Option<DeviceReport> {
        self.stop.store(true, Ordering::Relaxed);
        self.thread.take()?.join().ok().flatten()
    }
}

impl Drop for DeviceHandle {
    fn drop(&mut self) {
        self.halt();
    }
}
