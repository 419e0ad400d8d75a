//! DiskSim ASCII traces, as MQSim reads them (the traces in
//! `../shared/data/traces/`, from CMU-SAFARI/MQSim's `traces/`).
//!
//! Layout (`../shared/data/traces/README.md`; MQSim's
//! `IO_Flow_Trace_Based`): one request a line, space separated:
//! `arrival_time_ns device_number start_lba size_in_sectors type`; sectors
//! of 512 bytes; type `0` write, `1` read.
//!
//! Times: only the arrival, in nanoseconds from the trace's start:
//! `issue_ns`; `complete_ns` is `None`. `device` is the device number.

use std::collections::VecDeque;

use crate::num::{quoted, sectors_to_bytes, times, uint, uint32, Bad};
use crate::text::LineFormat;
use crate::Request;

#[derive(Default)]
pub(crate) struct Disksim;

impl LineFormat for Disksim {
    fn line(&mut self, text: &str, out: &mut VecDeque<Request>) -> Result<(), Bad> {
        let t: Vec<&str> = text.split_whitespace().collect();
        if t.is_empty() {
            return Ok(());
        }
        if t.len() != 5 {
            return Err(Bad::new(
                "line",
                format!(
                    "expected 5 fields (arrival_time_ns device_number start_lba size_in_sectors type), found {}",
                    t.len()
                ),
            ));
        }
        let issue = uint(t[0], "arrival_time_ns")?;
        let device = uint32(t[1], "device_number")?;
        let offset = times(uint(t[2], "start_lba")?, 512, "start_lba", "sectors")?;
        let bytes = sectors_to_bytes(uint(t[3], "size_in_sectors")?, "size_in_sectors")?;
        let write = match t[4] {
            "0" => true,
            "1" => false,
            x => {
                return Err(Bad::new(
                    "type",
                    format!("{} is not 0 (write) or 1 (read)", quoted(x)),
                ))
            }
        };
        out.push_back(Request {
            issue_ns: issue,
            offset,
            bytes,
            write,
            device: Some(device.to_string()),
            ..Request::default()
        });
        Ok(())
    }
}
