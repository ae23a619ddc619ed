use super::*;

#[test]
fn regions_are_label_values() {
    for ok in ["us-east-1", "eu_west.2", "westeurope", "A", "9"] {
        assert_eq!(validate_region(ok), Ok(()), "{ok}");
    }
    let long = "a".repeat(64);
    for bad in [
        "",
        "-us",
        "us-",
        "us east",
        "x\"} 0\nfederation_clusters_total{status=\"unreachable\"} 0\n#",
        "\"",
        "\u{1b}[2J",
        long.as_str(),
    ] {
        assert!(validate_region(bad).is_err(), "{bad:?}");
    }
}

#[test]
fn display_names_refuse_control_and_format_characters() {
    assert_eq!(validate_display_name("Store 42 — Lyon (été)"), Ok(()));
    for bad in [
        "a\u{1b}[2Jb",
        "soft\u{ad}hyphen",
        "mongolian\u{180e}vs",
        "tag\u{e0041}",
        "bidi\u{202e}",
        "anchor\u{fff9}",
        "nul\u{0}",
    ] {
        assert!(validate_display_name(bad).is_err(), "{bad:?}");
    }
    assert!(validate_display_name(&"x".repeat(MAX_DISPLAY_NAME_CHARS + 1)).is_err());
    assert!(validate_display_name(&"x".repeat(MAX_DISPLAY_NAME_CHARS)).is_ok());
}

#[test]
fn member_identities_are_kubernetes_uids() {
    assert!(is_member_uid("6f1c2a8e-0b7d-4f3e-9a51-2c8d7e6f1b20"));
    for bad in [
        "",
        "6F1C2A8E-0B7D-4F3E-9A51-2C8D7E6F1B20",
        "6f1c2a8e0b7d4f3e9a512c8d7e6f1b20",
        "6f1c2a8e-0b7d-4f3e-9a51-2c8d7e6f1b2",
        "6f1c2a8e-0b7d-4f3e-9a512-c8d7e6f1b20",
        "6f1c2a8e-0b7d-4f3e-9a51-2c8d7e6f1b2g",
        "\u{1b}[2J-0b7d-4f3e-9a51-2c8d7e6f1b20",
    ] {
        assert!(!is_member_uid(bad), "{bad:?}");
    }
}

#[test]
fn the_edge_part_is_the_full_status_key_for_key() {
    // One declaration: each edge-owned key has the same schema (docs,
    // bounds) in `EdgeStatus` as in `FederatedClusterStatus`, and the
    // key lists are exactly their properties.
    let full = serde_json::to_value(schemars::schema_for!(FederatedClusterStatus)).unwrap();
    let edge = serde_json::to_value(schemars::schema_for!(EdgeStatus)).unwrap();
    let props = |s: &serde_json::Value| s["properties"].as_object().unwrap().clone();
    let (full, edge) = (props(&full), props(&edge));
    let mut edge_keys: Vec<&str> = edge.keys().map(String::as_str).collect();
    let mut want: Vec<&str> = EDGE_OWNED_STATUS_KEYS.to_vec();
    edge_keys.sort();
    want.sort();
    assert_eq!(edge_keys, want);
    for key in EDGE_OWNED_STATUS_KEYS {
        assert_eq!(edge[*key], full[*key], "{key}");
    }
    let mut all: Vec<&str> = full.keys().map(String::as_str).collect();
    let mut owned: Vec<&str> = EDGE_OWNED_STATUS_KEYS
        .iter()
        .chain(HUB_OWNED_STATUS_KEYS)
        .copied()
        .collect();
    all.sort();
    owned.sort();
    assert_eq!(all, owned);
}
