//! A trace's requests as the replay takes them ([`TraceIo`]): marked by
//! the marking engine's rule (`--marks-from`, [`crate::trace_marks`]) and
//! grouped into replay threads by a stated rule ([`QueuesBy`]; the
//! fleet's module, `crate::fleet`, says why each). One conversion for the
//! streaming replay, a held replay and the fleet's spill files.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use traces::{Request, TraceError};

use super::TraceIo;
use crate::trace_marks::Marker;

/// The group of requests one replay thread issues, so the queue they
/// reach (the module's comment).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum QueuesBy {
    #[default]
    Process,
    Cpu,
    Volume,
}

impl QueuesBy {
    pub fn name(self) -> &'static str {
        match self {
            QueuesBy::Process => "process",
            QueuesBy::Cpu => "cpu",
            QueuesBy::Volume => "volume",
        }
    }

    /// The rule as the report states it.
    pub fn rule(self) -> &'static str {
        match self {
            QueuesBy::Process => {
                "by process (one thread per trace process, process i on core i mod cores and that core's SQ/CQ pair)"
            }
            QueuesBy::Cpu => {
                "by CPU (one thread per CPU the trace recorded, the i-th seen on core i mod cores and that core's SQ/CQ pair)"
            }
            QueuesBy::Volume => {
                "by volume (one thread per volume, the i-th seen on core i mod cores and that core's SQ/CQ pair)"
            }
        }
    }
}

impl std::str::FromStr for QueuesBy {
    type Err = String;
    fn from_str(s: &str) -> Result<QueuesBy, String> {
        match s {
            "process" => Ok(QueuesBy::Process),
            "cpu" => Ok(QueuesBy::Cpu),
            "volume" => Ok(QueuesBy::Volume),
            _ => Err(format!("'{s}' is not a rule: cpu, process or volume")),
        }
    }
}

/// Names each group of requests by its first appearance.
#[derive(Debug, Default)]
pub(crate) struct Groups(HashMap<String, u32>);

impl Groups {
    pub(crate) fn of(&mut self, volume: &str) -> u32 {
        let n = self.0.len() as u32;
        *self.0.entry(volume.to_string()).or_insert(n)
    }
}

/// A request's volume as the fleet names it.
pub fn volume_of(r: &Request) -> &str {
    r.device.as_deref().unwrap_or("-")
}

/// A trace request as the replay takes it: marked by `marker`
/// (`--marks-from`; Table 1's logic, [`table1_marks`], by default), its
/// thread named by the rule (a request without the rule's field goes to
/// the thread of those without).
pub(crate) fn trace_io(
    r: &Request,
    by: QueuesBy,
    groups: &mut Groups,
    marker: &mut Marker,
) -> TraceIo {
    let pid = match by {
        QueuesBy::Process => r.pid,
        QueuesBy::Cpu => r.cpu,
        QueuesBy::Volume => Some(groups.of(volume_of(r))),
    };
    TraceIo {
        issue_ns: r.issue_ns,
        complete_ns: r.complete_ns,
        bytes: u64::from(r.bytes),
        write: r.write,
        marks: marker.mark(r),
        pid,
    }
}

/// The requests (`comm`'s only, if given) as one replay takes them.
pub fn collect(
    requests: impl Iterator<Item = Result<Request, TraceError>>,
    comm: Option<&str>,
    by: QueuesBy,
    marker: &mut Marker,
) -> Result<Vec<TraceIo>, String> {
    let mut groups = Groups::default();
    let mut ios = Vec::new();
    for r in requests {
        let r = r.map_err(|e| e.to_string())?;
        if comm.is_some_and(|c| r.comm.as_deref() != Some(c)) {
            continue;
        }
        ios.push(trace_io(&r, by, &mut groups, marker));
    }
    Ok(ios)
}

/// The requests (`comm`'s only, if given) as one replay takes them, read
/// as they are asked for (`crate::replay`'s stream): marked by `marker`,
/// which then holds the counts; a row the reader refuses ends the stream
/// as its error.
pub fn stream(
    requests: impl Iterator<Item = Result<Request, TraceError>> + 'static,
    comm: Option<String>,
    by: QueuesBy,
    marker: Rc<RefCell<Marker>>,
) -> impl Iterator<Item = Result<TraceIo, String>> + 'static {
    let mut groups = Groups::default();
    requests.filter_map(move |r| match r {
        Err(e) => Some(Err(e.to_string())),
        Ok(r)
            if comm
                .as_deref()
                .is_some_and(|c| r.comm.as_deref() != Some(c)) =>
        {
            None
        }
        Ok(r) => Some(Ok(trace_io(&r, by, &mut groups, &mut marker.borrow_mut()))),
    })
}
