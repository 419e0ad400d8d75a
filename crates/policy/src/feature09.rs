//! `feature09`: a per-vector plan on today's NVMe drives, "Urgent by
//! queue": NVMe Feature 09h (Interrupt Vector Configuration) sets
//! Coalescing Disable on the vectors whose completions a thread waits for,
//! and Feature 08h (Interrupt Coalescing, [`crate::nvme`]) aggregates on
//! every other vector.
//!
//! **The features.** Feature 09h's value (CDW11) holds the Interrupt Vector
//! (IV) in bits 15:00 and Coalescing Disable (CD) in bit 16; one Set
//! Features command per vector. With CD set, "any interrupt coalescing
//! settings shall not be applied for this interrupt vector": an interrupt
//! per completion. Feature 08h is one value for the controller (Aggregation
//! Time in 100 us units, bits 15:08; Aggregation Threshold, 0's based, bits
//! 07:00), so every vector without CD shares one time and one threshold:
//! the plan is a set of CD vectors and one aggregation, nothing finer.
//!
//! **Sources.** Linux's NVMe target implements both for its PCI endpoint
//! controller, nvmet commit f1ecd491 ("nvmet: Implement interrupt config
//! feature support", posted as v6 15/18, 2024-12-20): "The NVMe base
//! specifications v2.1 mandate supporting the interrupt config feature
//! (NVME_FEAT_IRQ_CONFIG) for PCI controllers" and it is "prohibited for
//! fabrics controllers" (drivers/nvme/target/admin-cmd.c,
//! `nvmet_set_feat_irq_config`: `iv = cdw11 & 0xffff`, `cd = (cdw11 >> 16)
//! & 0x1`; `nvmet_get_feat_irq_config` answers `cd << 16 | iv`).
//! drivers/nvme/target/pci-epf.c, `nvmet_pci_epf_should_raise_irq`: the
//! admin queue's interrupt is never coalesced ("IRQ coalescing for the
//! admin queue is not allowed"), a vector with `cd` raises at every
//! completion, any other counts completions to the 08h threshold. Drives
//! answer it today: nvme-cli issue #325 (2018) reads 09h for vectors 0..18
//! and 0..128 of two drives, and nvme-cli PR #299 shows a Samsung 960 EVO
//! reporting 0x010000 (CD set) for vector 0, the admin queue's. uGDS PR #39
//! (ScaleX-IO/uGDS, open, 2026-08-20) uses 09h "to disable coalescing on
//! latency-sensitive synchronous vectors while enabling it on the batch
//! vector", with an 08h of 16 entries or 5 ms; only its description could
//! be read here, not its code.
//!
//! **Vectors.** Linux's nvme-pci gives I/O queue `qid` interrupt vector
//! `qid` ("A queue's vector matches the queue identifier unless the
//! controller has only one vector available", drivers/nvme/host/pci.c,
//! `nvme_create_queue`), vector 0 being the admin queue's. So I/O queue N
//! (1-based; the simulator's and emulator's queue `q` is N = q + 1) raises
//! vector N, and `--cd` names vectors that way.

use std::fmt;

use crate::nvme::{Aggregation, Nvme};
use crate::{Completion, Interrupt, Nanos, Policy};

/// The Feature Identifier of Interrupt Coalescing.
pub const FID_COALESCING: u8 = 0x08;
/// The Feature Identifier of Interrupt Vector Configuration.
pub const FID_VECTOR_CONFIG: u8 = 0x09;
/// Coalescing Disable, bit 16 of Feature 09h's value.
pub const CD_BIT: u32 = 1 << 16;
/// The highest vector `--cd` can list: the list is a 128-bit set, so that a
/// strategy's options stay plain values. A plan derived from a trace
/// ([`Plan`]) has no such bound.
pub const MAX_LISTED_VECTOR: u16 = 127;

/// A set of interrupt vectors, 0 to [`MAX_LISTED_VECTOR`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct VectorSet(u128);

impl VectorSet {
    pub const EMPTY: VectorSet = VectorSet(0);

    pub fn contains(self, iv: u16) -> bool {
        iv <= MAX_LISTED_VECTOR && self.0 & (1u128 << iv) != 0
    }

    /// With `iv` added; `Err` past [`MAX_LISTED_VECTOR`].
    pub fn with(self, iv: u16) -> Result<VectorSet, String> {
        if iv > MAX_LISTED_VECTOR {
            return Err(format!(
                "vector {iv} is past {MAX_LISTED_VECTOR}, the most --cd lists"
            ));
        }
        Ok(VectorSet(self.0 | (1u128 << iv)))
    }

    pub fn iter(self) -> impl Iterator<Item = u16> {
        (0..=MAX_LISTED_VECTOR).filter(move |&iv| self.contains(iv))
    }

    pub fn is_empty(self) -> bool {
        self.0 == 0
    }
}

/// `--cd`: which vectors have Coalescing Disable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CdVectors {
    /// These vectors (none: every I/O vector aggregated, as `nvme`).
    Listed(VectorSet),
    /// The vectors of the queues whose threads block on their I/O, which
    /// only the simulator knows (its jobs): it turns this into a list
    /// ([`resolve_sync`]) before building each queue's policy.
    Sync,
}

impl CdVectors {
    /// `sync`, `none`, or vectors and ranges joined by commas (`1,3`,
    /// `2-5`). Vector 0 is the admin queue's, never coalesced (nvmet
    /// pci-epf), and not an I/O queue's: refused.
    pub fn parse(s: &str) -> Result<CdVectors, String> {
        match s {
            "sync" => return Ok(CdVectors::Sync),
            "none" => return Ok(CdVectors::Listed(VectorSet::EMPTY)),
            _ => {}
        }
        let number = |w: &str| {
            w.trim().parse::<u16>().map_err(|_| {
                format!("'{w}' is not a vector number (give e.g. 1,3 or 2-5, none, or sync)")
            })
        };
        let mut set = VectorSet::EMPTY;
        for part in s.split(',') {
            let (from, to) = match part.split_once('-') {
                Some((a, b)) => (number(a)?, number(b)?),
                None => (number(part)?, number(part)?),
            };
            if from > to {
                return Err(format!("'{part}' is an empty range"));
            }
            if from == 0 {
                return Err("vector 0 is the admin queue's (never coalesced); I/O queue N's vector is N, from 1".into());
            }
            for iv in from..=to {
                set = set.with(iv)?;
            }
        }
        Ok(CdVectors::Listed(set))
    }
}

impl fmt::Display for CdVectors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CdVectors::Sync => f.write_str("sync"),
            CdVectors::Listed(set) if set.is_empty() => f.write_str("none"),
            CdVectors::Listed(set) => {
                let list: Vec<String> = set.iter().map(|iv| iv.to_string()).collect();
                f.write_str(&list.join(","))
            }
        }
    }
}

/// `--cd sync` made a list: the vector of each I/O queue whose `blocking`
/// entry is true (queue `q`'s vector is `q + 1`).
pub fn resolve_sync(blocking: &[bool]) -> Result<CdVectors, String> {
    let mut set = VectorSet::EMPTY;
    for (q, _) in blocking.iter().enumerate().filter(|(_, &b)| b) {
        let iv = u16::try_from(q + 1).map_err(|_| format!("queue {q} has no 16-bit vector"))?;
        set = set.with(iv)?;
    }
    Ok(CdVectors::Listed(set))
}

/// Feature 09h's value for `iv`: CD in bit 16, IV in bits 15:00.
pub fn vector_config(iv: u16, cd: bool) -> u32 {
    (u32::from(cd) << 16) | u32::from(iv)
}

/// Decodes a Feature 09h value: (IV, CD). Bits 31:17 are reserved.
pub fn decode_vector_config(cdw11: u32) -> Result<(u16, bool), String> {
    if cdw11 >> 17 != 0 {
        return Err(format!("feature value {cdw11:#x}: bits 31:17 are reserved"));
    }
    Ok(((cdw11 & 0xffff) as u16, cdw11 & CD_BIT != 0))
}

/// A whole plan: each vector's CD bit and the one aggregation the others
/// share, as `nvme set-feature` commands would apply it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    /// (vector, Coalescing Disable), by vector.
    pub vectors: Vec<(u16, bool)>,
    pub aggregation: Aggregation,
}

impl Plan {
    /// The nvme-cli commands, 08h first (it is the controller's one
    /// value), then one 09h per vector; `None` if the aggregation is not
    /// encodable (time not a multiple of 100 us up to 25.5 ms, threshold
    /// outside 1..=256).
    pub fn commands(&self, device: &str) -> Option<Vec<String>> {
        let agg = self.aggregation.to_feature()?;
        let mut out = vec![format!(
            "nvme set-feature {device} --feature-id={FID_COALESCING:#04x} --value={agg:#06x}"
        )];
        for &(iv, cd) in &self.vectors {
            out.push(format!(
                "nvme set-feature {device} --feature-id={FID_VECTOR_CONFIG:#04x} --value={:#07x}",
                vector_config(iv, cd)
            ));
        }
        Some(out)
    }
}

/// One completion queue's policy under the plan: an interrupt per
/// completion on a CD vector, 08h aggregation on any other.
#[derive(Clone, Debug)]
pub struct Feature09 {
    /// `None`: Coalescing Disable.
    aggregated: Option<Nvme>,
}

impl Feature09 {
    pub fn new(coalescing_disabled: bool, aggregation: Aggregation) -> Self {
        Feature09 {
            aggregated: (!coalescing_disabled).then(|| Nvme::new("feature09", aggregation)),
        }
    }

    pub fn coalescing_disabled(&self) -> bool {
        self.aggregated.is_none()
    }
}

impl Policy for Feature09 {
    fn name(&self) -> &str {
        "feature09"
    }

    fn completed(&mut self, now: Nanos, cqe: Completion) -> Option<Interrupt> {
        match &mut self.aggregated {
            // pci-epf: `if (iv->cd) return true;`
            None => Some(Interrupt::Full),
            Some(agg) => agg.completed(now, cqe),
        }
    }

    fn deadline_reached(&mut self, now: Nanos) -> Option<Interrupt> {
        self.aggregated.as_mut()?.deadline_reached(now)
    }

    fn deadline(&self) -> Option<Nanos> {
        self.aggregated.as_ref()?.deadline()
    }

    fn delay_bound(&self) -> Nanos {
        self.aggregated.as_ref().map_or(0, |a| a.delay_bound())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Marks, US};

    const AGG: Aggregation = Aggregation {
        time: 100 * US,
        threshold: 32,
    };

    #[test]
    fn a_cd_vector_fires_per_completion_and_another_aggregates() {
        let mut cd = Feature09::new(true, AGG);
        let mut agg = Feature09::new(false, AGG);
        for i in 0..4 {
            let c = Completion::ok(i, Marks::NONE);
            assert_eq!(cd.completed(i * US, c), Some(Interrupt::Full));
            assert_eq!(agg.completed(i * US, c), None);
        }
        assert_eq!(cd.deadline(), None);
        assert_eq!(cd.delay_bound(), 0);
        // 08h's timer runs from the first pending completion.
        assert_eq!(agg.deadline(), Some(100 * US));
        assert_eq!(agg.deadline_reached(100 * US), Some(Interrupt::Full));
        assert_eq!(agg.delay_bound(), 100 * US);
    }

    #[test]
    fn cd_lists_parse_and_print_back() {
        let v = CdVectors::parse("1,3-5").unwrap();
        assert_eq!(v.to_string(), "1,3,4,5");
        assert_eq!(CdVectors::parse(&v.to_string()), Ok(v));
        assert_eq!(CdVectors::parse("sync"), Ok(CdVectors::Sync));
        assert_eq!(CdVectors::parse("none").unwrap().to_string(), "none");
        assert!(CdVectors::parse("0").unwrap_err().contains("admin"));
        assert!(CdVectors::parse("128").unwrap_err().contains("past 127"));
        assert!(CdVectors::parse("4-2").is_err());
        assert!(CdVectors::parse("x").unwrap_err().contains("'x'"));
    }

    #[test]
    fn sync_resolves_to_the_blocking_queues_vectors() {
        let v = resolve_sync(&[true, false, true]).unwrap();
        assert_eq!(v.to_string(), "1,3");
        assert_eq!(resolve_sync(&[false]).unwrap().to_string(), "none");
    }

    #[test]
    fn feature_09_value_is_cd_bit_16_and_iv_bits_15_0() {
        assert_eq!(vector_config(1, true), 0x1_0001);
        assert_eq!(vector_config(300, false), 300);
        assert_eq!(decode_vector_config(0x1_0005), Ok((5, true)));
        assert_eq!(decode_vector_config(0xffff), Ok((0xffff, false)));
        assert!(decode_vector_config(0x2_0000).is_err());
    }

    #[test]
    fn a_plan_prints_08h_then_one_09h_per_vector() {
        let plan = Plan {
            vectors: vec![(1, true), (2, false)],
            aggregation: AGG,
        };
        let c = plan.commands("/dev/nvme0").unwrap();
        assert_eq!(
            c,
            [
                "nvme set-feature /dev/nvme0 --feature-id=0x08 --value=0x011f",
                "nvme set-feature /dev/nvme0 --feature-id=0x09 --value=0x10001",
                "nvme set-feature /dev/nvme0 --feature-id=0x09 --value=0x00002",
            ]
        );
        let odd = Plan {
            aggregation: Aggregation {
                time: 20 * US,
                threshold: 32,
            },
            ..plan
        };
        assert_eq!(odd.commands("/dev/nvme0"), None);
    }
}
