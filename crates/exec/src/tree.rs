//! The program's processes as /proc shows them: a process's children and
//! everything descended from it, each found through its parent (field 4
//! of /proc/PID/stat, man 5 proc).

use std::collections::HashMap;

/// Every process's parent, read now.
pub fn parents() -> HashMap<i32, i32> {
    let mut parent = HashMap::new();
    for e in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(p) = e.file_name().to_str().and_then(|n| n.parse::<i32>().ok()) else {
            continue;
        };
        let stat = std::fs::read_to_string(format!("/proc/{p}/stat")).unwrap_or_default();
        // "PID (COMM) STATE PPID ...": after the last ')'.
        let ppid = stat
            .rsplit(')')
            .next()
            .and_then(|rest| rest.split_whitespace().nth(1))
            .and_then(|v| v.parse::<i32>().ok());
        if let Some(pp) = ppid {
            parent.insert(p, pp);
        }
    }
    parent
}

/// `roots` and every process descended from them (gathered from one
/// reading, so none is reparented away between two).
pub fn descendants(roots: &[i32]) -> Vec<i32> {
    let parent = parents();
    let mut tree = roots.to_vec();
    let mut k = 0;
    while k < tree.len() {
        let p = tree[k];
        tree.extend(parent.iter().filter(|&(_, &pp)| pp == p).map(|(&c, _)| c));
        k += 1;
    }
    tree
}

/// This process's children (every thread's: an orphan is reparented to
/// the subreaper's process, whichever of its threads), from
/// /proc/self/task/TID/children (CONFIG_PROC_CHILDREN, checked on this
/// VM's 6.18 kernel), or from every process's parent without it.
pub fn children() -> Vec<i32> {
    let mut v = Vec::new();
    let mut found = false;
    for t in std::fs::read_dir("/proc/self/task")
        .into_iter()
        .flatten()
        .flatten()
    {
        if let Ok(text) = std::fs::read_to_string(t.path().join("children")) {
            found = true;
            v.extend(
                text.split_whitespace()
                    .filter_map(|p| p.parse::<i32>().ok()),
            );
        }
    }
    if !found {
        // SAFETY: getpid cannot fail.
        let me = unsafe { libc::getpid() };
        v = parents()
            .into_iter()
            .filter(|&(_, pp)| pp == me)
            .map(|(p, _)| p)
            .collect();
    }
    v.sort_unstable();
    v.dedup();
    v
}

/// A process's name (`comm`), empty when it is gone.
pub fn comm(pid: i32) -> String {
    std::fs::read_to_string(format!("/proc/{pid}/comm"))
        .map(|c| c.trim_end().to_string())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_child_and_its_child_are_found() {
        let mut c = std::process::Command::new("sh")
            .args(["-c", "sleep 5 & wait"])
            .spawn()
            .unwrap();
        let pid = c.id() as i32;
        // The shell's `sleep`, once it has started it.
        let mut tree = Vec::new();
        for _ in 0..200 {
            tree = descendants(&[pid]);
            if tree.len() == 2 {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        assert!(children().contains(&pid));
        assert_eq!(tree.len(), 2, "{tree:?}");
        assert_eq!(comm(tree[1]), "sleep");
        // SAFETY: our child and its child.
        for p in &tree {
            unsafe { libc::kill(*p, libc::SIGKILL) };
        }
        c.wait().unwrap();
    }
}
