use super::*;

const I: Duration = Duration::from_secs(30);

/// Europe/Berlin's rule as a POSIX TZ string: the same instants as the
/// IANA zone for 2026 without reading the platform's database.
fn berlin() -> TimeZone {
    TimeZone::posix("CET-1CEST,M3.5.0,M10.5.0/3").unwrap()
}

fn t(s: &str) -> Timestamp {
    s.parse().unwrap()
}

fn schedule(offline: &[&str], absent: Option<i64>) -> Schedule {
    Schedule::of(
        &Connectivity {
            time_zone: Some("Europe/Berlin".into()),
            offline: offline.iter().map(|s| (*s).to_owned()).collect(),
            absent_up_to_seconds: absent,
        },
        Some(berlin()),
    )
}

fn sleeping(back_by: &str) -> Expectation {
    Expectation::Sleeping {
        back_by: t(back_by),
    }
}

fn late(due: &str) -> Expectation {
    Expectation::LateToWake { due: t(due) }
}

#[test]
fn windows_read_and_print_as_written() {
    assert_eq!(
        Window::parse("22:00-06:00").unwrap(),
        Window::Daily {
            start: 22 * 60,
            len: 8 * 60
        }
    );
    assert_eq!(
        Window::parse("Sat 00:00-Mon 06:00").unwrap(),
        Window::Weekly {
            start: 5 * DAY,
            len: 2 * DAY + 6 * 60
        }
    );
    // Ending before it starts on the same day: the next week.
    assert_eq!(
        Window::parse("Mon 06:00-Mon 05:00").unwrap(),
        Window::Weekly {
            start: 6 * 60,
            len: WEEK - 60
        }
    );
    for w in [
        "22:00-06:00",
        "00:00-23:59",
        "Sat 00:00-Mon 06:00",
        "Sun 23:00-Mon 01:30",
    ] {
        assert_eq!(Window::parse(w).unwrap().to_string(), w);
    }
    for bad in [
        "22-06",
        "24:00-06:00",
        "22:00-06:60",
        "22:00",
        "sat 00:00-Mon 06:00",
        "Sat 00:00-06:00",
        "2:00-06:00",
        " 22:00-06:00",
        "22:00 - 06:00",
    ] {
        let e = Window::parse(bad).unwrap_err();
        assert!(e.contains("e.g. 22:00-06:00"), "{bad}: {e}");
    }
    for empty in ["06:00-06:00", "Mon 06:00-Mon 06:00"] {
        let e = Window::parse(empty).unwrap_err();
        assert!(e.contains("ends when it starts"), "{e}");
    }
}

fn conn(zone: Option<&str>, offline: &[&str], absent: Option<i64>) -> Connectivity {
    Connectivity {
        time_zone: zone.map(str::to_owned),
        offline: offline.iter().map(|s| (*s).to_owned()).collect(),
        absent_up_to_seconds: absent,
    }
}

fn known(z: &str) -> bool {
    [
        "Europe/Berlin",
        "UTC",
        "America/Argentina/Buenos_Aires",
        "Etc/GMT+1",
    ]
    .contains(&z)
}

#[test]
fn validation_is_strict_and_merges_overlaps_saying_so() {
    let (c, notes) = validate(&conn(Some("Europe/Berlin"), &["22:00-06:00"], None), known).unwrap();
    assert_eq!(c.offline, ["22:00-06:00"]);
    assert!(notes.is_empty());
    // Overlapping and touching windows merge, around midnight too.
    let (c, notes) = validate(
        &conn(
            Some("Europe/Berlin"),
            &["01:00-06:00", "22:00-02:00", "12:00-13:00", "13:00-13:30"],
            None,
        ),
        known,
    )
    .unwrap();
    assert_eq!(c.offline, ["12:00-13:30", "22:00-06:00"]);
    assert_eq!(
        notes,
        [
            "offline windows 12:00-13:00, 13:00-13:30 overlap: merged into 12:00-13:30",
            "offline windows 22:00-02:00, 01:00-06:00 overlap: merged into 22:00-06:00",
        ]
    );
    let (c, notes) = validate(
        &conn(
            Some("UTC"),
            &["Fri 18:00-Mon 06:00", "Sun 20:00-Mon 08:00", "22:00-06:00"],
            None,
        ),
        known,
    )
    .unwrap();
    assert_eq!(c.offline, ["22:00-06:00", "Fri 18:00-Mon 08:00"]);
    assert_eq!(notes.len(), 1, "{notes:?}");
    // A duplicate is an overlap.
    let (c, notes) = validate(
        &conn(Some("UTC"), &["22:00-06:00", "22:00-06:00"], None),
        known,
    )
    .unwrap();
    assert_eq!((c.offline.len(), notes.len()), (1, 1));

    let err = |c: Connectivity| validate(&c, known).unwrap_err();
    assert!(err(conn(None, &["22:00-06:00"], None)).contains("add --tz ZONE"));
    assert!(err(conn(Some("Europe/Berlin"), &[], Some(3600))).contains("without offline windows"));
    assert!(err(conn(None, &[], None)).contains("--clear removes it"));
    for zone in [
        "Europe/Berln",
        "europe/../etc",
        "Mars/Olympus",
        "Europe/Berlin\u{1b}[2J",
        "",
    ] {
        let e = err(conn(Some(zone), &["22:00-06:00"], None));
        assert!(
            e.starts_with("unknown time zone") && e.contains("e.g. Europe/Berlin"),
            "{e}"
        );
        assert!(!e.contains('\u{1b}'), "{e:?}");
    }
    for z in ["America/Argentina/Buenos_Aires", "Etc/GMT+1"] {
        assert!(validate(&conn(Some(z), &["22:00-06:00"], None), known).is_ok());
    }
    assert!(
        err(conn(Some("UTC"), &["22:00-06:00", "06:00-22:00"], None)).contains("no time online")
    );
    assert!(
        err(conn(
            Some("UTC"),
            &["Mon 00:00-Thu 00:00", "Wed 00:00-Mon 00:00"],
            None
        ))
        .contains("no time online")
    );
    assert!(err(conn(Some("UTC"), &["25:00-06:00"], None)).contains("is not HH:MM-HH:MM"));
    let many: Vec<String> = (0..17).map(|h| format!("{h:02}:00-{h:02}:30")).collect();
    let many: Vec<&str> = many.iter().map(String::as_str).collect();
    assert!(err(conn(Some("UTC"), &many, None)).contains("at most 16"));
    assert!(err(conn(None, &[], Some(59))).contains("out of range"));
    assert!(err(conn(None, &[], Some(604_801))).contains("a minute to a week"));
    assert!(err(conn(None, &[], Some(-5))).contains("-5s"));
    assert!(validate(&conn(None, &[], Some(604_800)), known).is_ok());
}

#[test]
fn a_night_window_in_berlin_across_the_year() {
    let s = schedule(&["22:00-06:00"], None);
    // (last heard, now, expected), all UTC; Berlin is UTC+1 in winter, +2 in summer.
    let cases = [
        // Winter: 22:00 CET is 21:00Z, 06:00 CET is 05:00Z.
        (
            "2026-01-10T20:59:00Z",
            "2026-01-10T20:59:30Z",
            Expectation::AsUsual,
        ),
        (
            "2026-01-10T20:59:00Z",
            "2026-01-10T20:59:59Z",
            Expectation::AsUsual,
        ),
        (
            "2026-01-10T20:59:00Z",
            "2026-01-10T21:00:00Z",
            sleeping("2026-01-11T05:01:30Z"),
        ),
        (
            "2026-01-10T20:59:00Z",
            "2026-01-11T05:01:29Z",
            sleeping("2026-01-11T05:01:30Z"),
        ),
        (
            "2026-01-10T20:59:00Z",
            "2026-01-11T05:01:30Z",
            late("2026-01-11T05:01:30Z"),
        ),
        // Heard inside the window, then silent: still asleep.
        (
            "2026-01-10T23:00:00Z",
            "2026-01-11T01:00:00Z",
            sleeping("2026-01-11T05:01:30Z"),
        ),
        // Woke, reported, went quiet after the window: judged as usual.
        (
            "2026-01-11T05:00:30Z",
            "2026-01-11T07:00:00Z",
            Expectation::AsUsual,
        ),
        // Late stays late through the next night's window.
        (
            "2026-01-10T20:59:00Z",
            "2026-01-11T22:30:00Z",
            late("2026-01-11T05:01:30Z"),
        ),
        // Spring forward (29 March 2026, 02:00 CET -> 03:00 CEST): the
        // night lasts 7 hours, from 21:00Z to 04:00Z.
        (
            "2026-03-28T20:00:00Z",
            "2026-03-28T20:59:59Z",
            Expectation::AsUsual,
        ),
        (
            "2026-03-28T20:00:00Z",
            "2026-03-28T21:00:00Z",
            sleeping("2026-03-29T04:01:30Z"),
        ),
        (
            "2026-03-28T20:00:00Z",
            "2026-03-29T04:01:29Z",
            sleeping("2026-03-29T04:01:30Z"),
        ),
        (
            "2026-03-28T20:00:00Z",
            "2026-03-29T04:01:30Z",
            late("2026-03-29T04:01:30Z"),
        ),
        // The next night is in summer time: 22:00 CEST is 20:00Z.
        (
            "2026-03-29T19:00:00Z",
            "2026-03-29T20:00:00Z",
            sleeping("2026-03-30T04:01:30Z"),
        ),
        // Fall back (25 October 2026, 03:00 CEST -> 02:00 CET): the night
        // lasts 9 hours, from 20:00Z to 05:00Z.
        (
            "2026-10-24T19:00:00Z",
            "2026-10-24T19:59:59Z",
            Expectation::AsUsual,
        ),
        (
            "2026-10-24T19:00:00Z",
            "2026-10-24T20:00:00Z",
            sleeping("2026-10-25T05:01:30Z"),
        ),
        (
            "2026-10-24T19:00:00Z",
            "2026-10-25T04:30:00Z",
            sleeping("2026-10-25T05:01:30Z"),
        ),
        (
            "2026-10-24T19:00:00Z",
            "2026-10-25T05:01:30Z",
            late("2026-10-25T05:01:30Z"),
        ),
        // New Year's Eve: the window spans midnight and the year.
        (
            "2026-12-31T20:00:00Z",
            "2027-01-01T00:00:00Z",
            sleeping("2027-01-01T05:01:30Z"),
        ),
    ];
    for (heard, now, want) in cases {
        let (got, _) = expect(&s, t(heard), I, t(now));
        assert_eq!(got, want, "heard {heard}, now {now}");
    }
}

#[test]
fn the_platform_database_agrees_with_the_rule() {
    // Where the platform has the IANA database, its Europe/Berlin judges
    // the DST nights as the POSIX rule does.
    let Ok(zone) = TimeZone::get("Europe/Berlin") else {
        return;
    };
    let c = conn(Some("Europe/Berlin"), &["22:00-06:00"], None);
    let real = Schedule::of(&c, Some(zone));
    let rule = Schedule::of(&c, Some(berlin()));
    for (heard, now) in [
        ("2026-03-28T20:00:00Z", "2026-03-29T04:01:29Z"),
        ("2026-03-28T20:00:00Z", "2026-03-29T04:01:30Z"),
        ("2026-10-24T19:00:00Z", "2026-10-25T05:01:29Z"),
        ("2026-10-24T19:00:00Z", "2026-10-24T19:59:59Z"),
    ] {
        assert_eq!(
            expect(&real, t(heard), I, t(now)),
            expect(&rule, t(heard), I, t(now))
        );
    }
}

#[test]
fn wall_clock_times_in_skipped_and_repeated_hours() {
    // 02:00-04:00 on the spring-forward night: 02:00 does not exist, the
    // window opens at 03:00 CEST (01:00Z) and lasts an hour.
    let s = schedule(&["02:00-04:00"], None);
    let heard = "2026-03-29T00:30:00Z";
    assert_eq!(
        expect(&s, t(heard), I, t("2026-03-29T00:59:59Z")).0,
        Expectation::AsUsual
    );
    assert_eq!(
        expect(&s, t(heard), I, t("2026-03-29T01:00:00Z")).0,
        sleeping("2026-03-29T02:01:30Z")
    );
    // 02:00-02:30 on the fall-back night: its first occurrence (CEST), 00:00Z-00:30Z.
    let s = schedule(&["02:00-02:30"], None);
    let heard = "2026-10-24T23:00:00Z";
    assert_eq!(
        expect(&s, t(heard), I, t("2026-10-25T00:00:00Z")).0,
        sleeping("2026-10-25T00:31:30Z")
    );
    assert_eq!(
        expect(&s, t(heard), I, t("2026-10-25T01:10:00Z")).0,
        late("2026-10-25T00:31:30Z"),
        "the repeated 02:00-02:30 CET is not a second window"
    );
}

#[test]
fn touching_windows_are_one_night_and_weekly_windows_recur_weekly() {
    let s = schedule(&["22:00-02:00", "02:00-06:00"], None);
    assert_eq!(
        expect(&s, t("2026-01-10T20:00:00Z"), I, t("2026-01-11T02:00:00Z")).0,
        sleeping("2026-01-11T05:01:30Z"),
        "not late at 02:00 local"
    );
    // Closed over the weekend: Saturday 00:00 to Monday 06:00 Berlin.
    let s = schedule(&["Sat 00:00-Mon 06:00"], None);
    // 2026-01-09 is a Friday.
    let heard = "2026-01-09T22:59:00Z";
    assert_eq!(
        expect(&s, t(heard), I, t("2026-01-09T22:59:59Z")).0,
        Expectation::AsUsual
    );
    assert_eq!(
        expect(&s, t(heard), I, t("2026-01-11T12:00:00Z")).0,
        sleeping("2026-01-12T05:01:30Z")
    );
    assert_eq!(
        expect(&s, t(heard), I, t("2026-01-12T05:01:30Z")).0,
        late("2026-01-12T05:01:30Z")
    );
    // Silent from Tuesday: not expected before Saturday.
    let (e, next) = expect(&s, t("2026-01-13T10:00:00Z"), I, t("2026-01-14T10:00:00Z"));
    assert_eq!(e, Expectation::AsUsual);
    assert_eq!(
        next,
        Some(Duration::from_secs(2 * 86_400 + 13 * 3600) + crate::fleet::phase::TRANSITION_MARGIN),
        "judged again when the window opens (Saturday 00:00 CET = Friday 23:00Z)"
    );
}

#[test]
fn the_longest_absence_and_both_together() {
    let s = Schedule::of(&conn(None, &[], Some(36 * 3600)), None);
    let heard = t("2026-01-10T12:00:00Z");
    assert_eq!(
        expect(&s, heard, I, t("2026-01-11T23:59:59Z")).0,
        sleeping("2026-01-12T00:01:30Z")
    );
    assert_eq!(
        expect(&s, heard, I, t("2026-01-12T00:01:30Z")).0,
        late("2026-01-12T00:01:30Z")
    );
    // Windows and an absence: asleep while either expects it.
    let s = schedule(&["22:00-06:00"], Some(3 * 3600));
    let heard = t("2026-01-10T20:59:00Z");
    assert_eq!(
        expect(&s, heard, I, t("2026-01-10T20:59:30Z")).0,
        sleeping("2026-01-11T00:00:30Z")
    );
    assert_eq!(
        expect(&s, heard, I, t("2026-01-11T03:00:00Z")).0,
        sleeping("2026-01-11T05:01:30Z")
    );
    assert_eq!(
        expect(&s, heard, I, t("2026-01-11T06:00:00Z")).0,
        late("2026-01-11T05:01:30Z")
    );
    // The interval scales the grace.
    let (e, _) = expect(
        &s,
        heard,
        Duration::from_secs(600),
        t("2026-01-11T05:20:00Z"),
    );
    assert_eq!(e, sleeping("2026-01-11T05:30:00Z"));
}

#[test]
fn requeue_at_the_next_change_sees_it() {
    let s = schedule(&["22:00-06:00"], None);
    let heard = t("2026-03-28T19:00:00Z");
    let mut now = t("2026-03-28T19:30:00Z");
    let mut seen = vec![expect(&s, heard, I, now).0];
    while let (_, Some(d)) = expect(&s, heard, I, now) {
        now += SignedDuration::try_from(d).unwrap();
        seen.push(expect(&s, heard, I, now).0);
    }
    assert_eq!(
        seen,
        [
            Expectation::AsUsual,
            sleeping("2026-03-29T04:01:30Z"),
            late("2026-03-29T04:01:30Z")
        ]
    );
}

#[test]
fn an_unknown_zone_judges_only_the_absence() {
    let c = conn(Some("Mars/Olympus"), &["22:00-06:00"], None);
    let s = Schedule::of(&c, None);
    assert!(s.is_empty());
    assert_eq!(
        expect(&s, t("2026-01-10T20:59:00Z"), I, t("2026-01-10T23:00:00Z")),
        (Expectation::AsUsual, None)
    );
}

#[test]
fn described_for_people() {
    assert_eq!(
        describe(&conn(
            Some("Europe/Berlin"),
            &["22:00-06:00", "Sat 00:00-Mon 06:00"],
            Some(129_600)
        )),
        "offline 22:00-06:00, Sat 00:00-Mon 06:00 Europe/Berlin, absent up to 1d12h"
    );
    assert_eq!(describe(&conn(None, &[], Some(3600))), "absent up to 1h");
}
