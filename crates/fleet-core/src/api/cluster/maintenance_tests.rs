use super::*;

#[test]
fn a_window_is_open_from_since_until_until() {
    let t = |s: i64| Timestamp::from_second(1_800_000_000 + s).unwrap();
    let w = MaintenanceWindow {
        since: Some(Time(t(0))),
        until: Time(t(60)),
        reason: None,
    };
    assert!(!w.is_open(t(-1)));
    assert!(w.is_open(t(0)));
    assert!(w.is_open(t(59)));
    assert!(!w.is_open(t(60)), "it ends by itself");
    let open_now = MaintenanceWindow { since: None, ..w };
    assert!(open_now.is_open(t(-100)));
}
