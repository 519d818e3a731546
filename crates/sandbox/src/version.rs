//! Node versions whose permission model has the known bypasses fixed (>= 22.23, >= 24.17,
//! >= 26.3.1; odd and older lines are refused). Shared with the build script, which decides
//! > whether this host can run the code-mode tests.

pub fn fmt((a, b, c): (u32, u32, u32)) -> String {
    format!("{a}.{b}.{c}")
}

pub fn parse_version(v: &str) -> Option<(u32, u32, u32)> {
    let mut parts = v.trim().trim_start_matches('v').splitn(3, '.');
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next()?.parse().ok()?;
    let patch_part = parts.next()?;
    let digits: String = patch_part
        .chars()
        .take_while(|c| c.is_ascii_digit())
        .collect();
    Some((major, minor, digits.parse().ok()?))
}

/// Minimum versions with the known permission-model bypasses fixed.
pub fn is_sound(v: (u32, u32, u32)) -> Result<(), String> {
    let minimum = match v.0 {
        22 => (22, 23, 0),
        24 => (24, 17, 0),
        26 => (26, 3, 1),
        major if major > 26 && major % 2 == 0 => return Ok(()),
        _ => {
            return Err(format!(
                "node {} is not supported for code mode (need >= 22.23, >= 24.17 or >= 26.3.1)",
                fmt(v)
            ))
        }
    };
    if v >= minimum {
        Ok(())
    } else {
        Err(format!(
            "node {} has known permission-model bypasses (need >= {})",
            fmt(v),
            fmt(minimum)
        ))
    }
}
