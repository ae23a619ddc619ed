//! A site's bucket: a stable number 0–255 derived from its name alone,
//! carried by every FederatedCluster as the label [`BUCKET_LABEL`]
//! (docs/scaling.md#buckets). Hub replicas will be able to own sets of
//! buckets; moving a bucket from one replica to another never relabels a
//! site, because the bucket depends on nothing but the name.
//!
//! The hash is the first byte of the SHA-256 digest of the site's name
//! (its UTF-8 bytes, no newline), written in decimal without leading
//! zeros. Anyone can reproduce it:
//!
//! ```text
//! echo $((16#$(printf %s site-a | sha256sum | cut -c1-2)))
//! python3 -c 'import hashlib,sys; print(hashlib.sha256(sys.argv[1].encode()).digest()[0])' site-a
//! ```
//!
//! `kubectl fleet register` writes the label; the hub writes it on sites
//! that lack it (registered by an older release) and corrects a wrong one
//! (`operator::bucket`). The admission policy cannot compute SHA-256 (CEL
//! has no hash), so it guards the value's form and what the hub may change
//! (`manifests::admission::site_metadata_policy`).

use std::collections::BTreeMap;

use sha2::Digest as _;

/// The label holding a site's bucket.
pub const BUCKET_LABEL: &str = "federation.kubectl-fleet.dev/bucket";

/// How many buckets there are: the label takes 0 to `BUCKETS - 1`.
pub const BUCKETS: u16 = 256;

/// A regular expression matching exactly the well-formed label values
/// (`0` to `255`, decimal, no leading zero), as the admission policy
/// checks them.
pub const BUCKET_VALUE_PATTERN: &str = "^(0|[1-9][0-9]?|1[0-9][0-9]|2[0-4][0-9]|25[0-5])$";

/// The bucket of the site named `name`: the first byte of SHA-256(name).
pub fn bucket_of(name: &str) -> u8 {
    sha2::Sha256::digest(name.as_bytes())[0]
}

/// The label value of `name`'s bucket, in decimal.
pub fn bucket_label_value(name: &str) -> String {
    bucket_of(name).to_string()
}

/// A well-formed label value (`0` to `255`, no sign, no leading zero,
/// nothing around it), as a number; None for anything else.
pub fn parse_bucket(value: &str) -> Option<u8> {
    let canonical = !value.is_empty()
        && value.bytes().all(|b| b.is_ascii_digit())
        && (value == "0" || !value.starts_with('0'));
    canonical.then(|| value.parse().ok()).flatten()
}

/// What a site's labels say about its bucket.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BucketLabel {
    /// The label holds the bucket of the site's name.
    Right,
    /// No label (a site registered before buckets existed, or whose label
    /// was removed).
    Missing,
    /// The label holds something else: another bucket, or a value that is
    /// not one (kept here, for the log).
    Wrong(String),
}

impl BucketLabel {
    /// The state of `labels` (a site's, None when it has none) for the
    /// site `name`.
    pub fn of(name: &str, labels: Option<&BTreeMap<String, String>>) -> Self {
        match labels.and_then(|l| l.get(BUCKET_LABEL)) {
            None => BucketLabel::Missing,
            Some(v) if parse_bucket(v) == Some(bucket_of(name)) => BucketLabel::Right,
            Some(v) => BucketLabel::Wrong(v.clone()),
        }
    }

    /// `missing` or `wrong` (the `reason` of the hub's backfill counter);
    /// None when nothing is to be written.
    pub fn reason(&self) -> Option<&'static str> {
        match self {
            BucketLabel::Right => None,
            BucketLabel::Missing => Some("missing"),
            BucketLabel::Wrong(_) => Some("wrong"),
        }
    }
}

/// Every `reason` [`BucketLabel::reason`] gives.
pub const BACKFILL_REASONS: [&str; 2] = ["missing", "wrong"];

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Pinned: a change of the hash (or of how the name is fed to it)
    /// relabels every site of every fleet, and must fail here. Each value
    /// is also what `sha256sum` gives (see the module's documentation).
    #[test]
    fn golden_buckets() {
        for (name, bucket) in [
            ("site-a", 215),
            ("site-b", 24),
            ("hub", 8),
            ("us-east-1-prod", 97),
            ("edge-00042", 13),
            ("a", 202),
        ] {
            assert_eq!(bucket_of(name), bucket, "{name}");
            assert_eq!(bucket_label_value(name), bucket.to_string(), "{name}");
        }
    }

    #[test]
    fn only_canonical_decimal_values_parse() {
        for (v, want) in [
            ("0", Some(0)),
            ("7", Some(7)),
            ("17", Some(17)),
            ("255", Some(255)),
            ("256", None),
            ("017", None),
            ("00", None),
            ("-1", None),
            ("+1", None),
            (" 1", None),
            ("1 ", None),
            ("", None),
            ("0x1f", None),
            ("99999999999999999999", None),
        ] {
            assert_eq!(parse_bucket(v), want, "{v:?}");
        }
    }

    #[test]
    fn the_pattern_admits_exactly_what_parses() {
        // The pattern is CEL's (RE2); these shapes need nothing beyond
        // what every regex engine reads alike, checked by hand here.
        for n in 0..=999u32 {
            let v = n.to_string();
            assert_eq!(parse_bucket(&v).is_some(), n <= 255, "{v}");
        }
        assert_eq!(
            BUCKET_VALUE_PATTERN,
            "^(0|[1-9][0-9]?|1[0-9][0-9]|2[0-4][0-9]|25[0-5])$"
        );
    }

    #[test]
    fn a_label_is_right_missing_or_wrong() {
        let labels = |v: &str| BTreeMap::from([(BUCKET_LABEL.to_owned(), v.to_owned())]);
        assert_eq!(
            BucketLabel::of("site-a", Some(&labels("215"))),
            BucketLabel::Right
        );
        assert_eq!(BucketLabel::of("site-a", None), BucketLabel::Missing);
        assert_eq!(
            BucketLabel::of("site-a", Some(&BTreeMap::new())),
            BucketLabel::Missing
        );
        for bad in ["17", "0215", "x", ""] {
            assert_eq!(
                BucketLabel::of("site-a", Some(&labels(bad))),
                BucketLabel::Wrong(bad.to_owned())
            );
        }
        assert_eq!(BucketLabel::Missing.reason(), Some(BACKFILL_REASONS[0]));
        assert_eq!(
            BucketLabel::Wrong("1".into()).reason(),
            Some(BACKFILL_REASONS[1])
        );
        assert_eq!(BucketLabel::Right.reason(), None);
    }

    /// Pearson's χ² of `names` over the buckets (255 degrees of freedom:
    /// mean 255, standard deviation ≈ 22.6 for an even spread).
    fn chi_squared(names: impl Iterator<Item = String>) -> (f64, usize) {
        let mut counts = [0usize; BUCKETS as usize];
        let mut n = 0;
        for name in names {
            counts[bucket_of(&name) as usize] += 1;
            n += 1;
        }
        let expected = n as f64 / f64::from(BUCKETS);
        let chi = counts
            .iter()
            .map(|&c| (c as f64 - expected).powi(2) / expected)
            .sum();
        (chi, n)
    }

    /// The names fleets really use, numbered in sequence, spread evenly:
    /// 25,600 sites `site-00000` … are 100 a bucket give or take what
    /// chance gives.
    #[test]
    fn numbered_names_spread_evenly() {
        let (chi, n) = chi_squared((0..25_600).map(|i| format!("site-{i:05}")));
        assert_eq!(n, 25_600);
        assert!(chi < 360.0, "χ² = {chi}");
        let mut counts = [0u32; BUCKETS as usize];
        for i in 0..25_600 {
            counts[bucket_of(&format!("site-{i:05}")) as usize] += 1;
        }
        let (min, max) = (counts.iter().min().unwrap(), counts.iter().max().unwrap());
        assert!(*min >= 60 && *max <= 145, "{min}..{max}");
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(24))]
        /// Whatever a fleet's naming scheme (any prefix, any suffix),
        /// 4,096 of its names spread over the 256 buckets as evenly as
        /// chance does: χ² below 400, 6 standard deviations above its mean
        /// (an uneven hash would give thousands).
        #[test]
        fn any_naming_scheme_spreads_evenly(
            prefix in "[a-z][a-z0-9-]{0,20}",
            suffix in "(-[a-z0-9]{1,8})?",
        ) {
            let names = (0..4096).map(|i| format!("{prefix}{i}{suffix}"));
            let (chi, _) = chi_squared(names);
            prop_assert!(chi < 400.0, "χ² = {}", chi);
        }
    }
}
