//! Shared test driver: a stream in, the interrupts out.
#![allow(dead_code)]

use policy::replay::Replay;
use policy::{build, Command, Completion, Interrupt, Marks, Nanos, PolicySpec};

#[derive(Clone, Copy, Debug)]
pub enum Ev {
    Submit(u64, Marks),
    Done(u64, Marks),
    Error(u64, Marks),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Irq {
    pub time: Nanos,
    pub kind: Interrupt,
    pub ids: Vec<u64>,
}

pub fn run_spec(spec: &PolicySpec, events: &[(Nanos, Ev)]) -> Vec<Irq> {
    run(Replay::new(build(spec).unwrap()), events)
}

pub fn run_named(name: &str, events: &[(Nanos, Ev)]) -> Vec<Irq> {
    run_spec(&PolicySpec::named(name), events)
}

pub fn run(mut replay: Replay, events: &[(Nanos, Ev)]) -> Vec<Irq> {
    let mut irqs = Vec::new();
    let mut sink = |d: &policy::replay::Delivery| {
        irqs.push(Irq {
            time: d.time,
            kind: d.kind,
            ids: d.reaped.iter().map(|r| r.id).collect(),
        })
    };
    for &(t, ev) in events {
        match ev {
            Ev::Submit(id, marks) => replay.submit(t, Command { id, marks }, &mut sink).unwrap(),
            Ev::Done(id, marks) => replay
                .complete(t, Completion::ok(id, marks), &mut sink)
                .unwrap(),
            Ev::Error(id, marks) => replay
                .complete(
                    t,
                    Completion {
                        id,
                        marks,
                        error: true,
                    },
                    &mut sink,
                )
                .unwrap(),
        }
    }
    replay.finish(&mut sink);
    irqs
}

pub fn done(t: Nanos, id: u64) -> (Nanos, Ev) {
    (t, Ev::Done(id, Marks::NONE))
}
