//! OpenAPI validation of custom objects (kube-openapi semantics,
//! apiextensions wording) and `x-kubernetes-list-type` uniqueness.

use super::*;

pub(super) fn child_name(path: &str, k: &str) -> String {
    if path.is_empty() {
        k.to_string()
    } else {
        format!("{path}.{k}")
    }
}

/// The field of a kube-openapi error (its name without the leading dot).
pub(super) fn err_field(path: &str) -> String {
    path.trim_start_matches('.').to_string()
}

pub(super) fn invalid(path: &str, value: String, detail: String) -> Cause {
    Cause::new(
        "FieldValueInvalid",
        err_field(path),
        format!("Invalid value: {value}: {detail}"),
    )
}

pub(super) fn types_of(s: &Value) -> Vec<&str> {
    if flag(s, "x-kubernetes-int-or-string") {
        return vec!["integer", "string"];
    }
    s.get("type")
        .and_then(Value::as_str)
        .filter(|t| !t.is_empty())
        .map(|t| vec![t])
        .unwrap_or_default()
}

/// Validates `v` against `s`. `old` is the correlated stored value on
/// updates: an unchanged value is not validated again (CRD validation
/// ratcheting, on by default in the real server).
pub(super) fn validate_value(
    s: &Value,
    v: &Value,
    old: Option<&Value>,
    path: &str,
    errs: &mut Vec<Cause>,
) {
    if old == Some(v) {
        return;
    }
    let types = types_of(s);
    let enumv = s.get("enum").and_then(Value::as_array);
    if v.is_null() {
        if !types.is_empty() && !types.contains(&"null") && !flag(s, "nullable") {
            errs.push(type_invalid(path, &types.join(","), "null"));
        }
        if let Some(e) = enumv
            && !e.contains(v)
        {
            errs.push(enum_fail(path, v, e));
        }
        return;
    }
    if flag(s, "x-kubernetes-int-or-string") {
        let actual = type_name(v);
        let float_int = actual == "number" && v.as_f64().is_some_and(is_json_integer);
        if !(types.contains(&actual) || float_int) {
            errs.push(type_invalid(path, &types.join(","), actual));
        }
    } else if !types.is_empty() {
        match type_check(&types, kept_format(s, &types), v, path) {
            TypeCheck::Invalid(cause) => errs.push(cause),
            // An array where a string with a format is expected: the real
            // server's type validator lets it through, and nothing else
            // applies to it (kube-openapi `typeValidator.Validate`).
            TypeCheck::Skipped => return,
            TypeCheck::Valid => {}
        }
    }
    if let Value::Number(n) = v
        && types.contains(&"integer")
        && let Some(cause) = checked_range(n, kept_format(s, &types), path)
    {
        errs.push(cause);
    }
    match v {
        Value::String(st) => {
            validate_string(s, st, path, errs);
            validate_format(s, st, path, errs);
        }
        Value::Number(n) => validate_number(s, n, path, errs),
        Value::Array(a) => validate_array(s, a, old.and_then(Value::as_array), path, errs),
        _ => {}
    }
    if let Some(e) = enumv
        && !e.iter().any(|x| enum_equal(x, v))
    {
        errs.push(enum_fail(path, v, e));
    }
    if let Value::Object(m) = v {
        validate_object(s, m, old.and_then(Value::as_object), path, errs);
    }
}

/// The outcome of kube-openapi's type validator for one value.
pub(super) enum TypeCheck {
    Valid,
    Invalid(Cause),
    /// Passed without checking the type (see its use).
    Skipped,
}

/// The type and format kube-openapi infers from a decoded JSON value
/// (`typeValidator.schemaInfoForType`): a number is an int64 when it is
/// one, else a float64 (what the real server's decoder makes of it).
fn go_type(v: &Value) -> (&'static str, &'static str) {
    match v {
        Value::Number(n) if n.is_i64() => ("integer", "int64"),
        Value::Number(_) => ("number", "float64"),
        Value::String(_) => ("string", ""),
        Value::Bool(_) => ("boolean", ""),
        Value::Array(_) => ("array", ""),
        Value::Object(_) => ("object", ""),
        Value::Null => ("null", ""),
    }
}

/// The format the real server validates with: apiextensions strips the
/// ones it does not support for the type
/// (`StripUnsupportedFormatsPostProcessorForVersion`).
pub(super) fn kept_format<'a>(s: &'a Value, types: &[&str]) -> &'a str {
    let format = s.get("format").and_then(Value::as_str).unwrap_or_default();
    let kept = match types {
        [] | ["string"] => format_ok(format, "").is_some(),
        ["integer"] => matches!(format, "int32" | "int64"),
        ["number"] => matches!(format, "float" | "double"),
        _ => false,
    };
    if kept { format } else { "" }
}

/// kube-openapi's `typeValidator.Validate` for a non-null value.
pub(super) fn type_check(types: &[&str], format: &str, v: &Value, path: &str) -> TypeCheck {
    let (actual, actual_format) = go_type(v);
    let float_int =
        actual == "number" && v.as_f64().is_some_and(is_json_integer) && types.contains(&"integer");
    let int_float = actual == "integer" && types.contains(&"number");
    let string_or_array = matches!(v, Value::String(_) | Value::Array(_));
    let has_format = !format.is_empty();
    let matches_format =
        types.contains(&actual) || actual_format == format || float_int || int_float;
    if has_format && !(string_or_array || matches_format) {
        return TypeCheck::Invalid(type_invalid(path, format, actual_format));
    }
    let numeric = types.contains(&"number") || types.contains(&"integer");
    if has_format && string_or_array && !numeric {
        return if actual == "array" {
            TypeCheck::Skipped
        } else {
            TypeCheck::Valid
        };
    }
    if !(types.contains(&actual) || float_int || int_float) {
        return TypeCheck::Invalid(type_invalid(path, &types.join(","), actual));
    }
    TypeCheck::Valid
}

/// go-openapi's `IsFloat64AJSONInteger`: a float that JSON can carry as an
/// integer exactly (within ±(2^53 − 1)).
pub(super) fn is_json_integer(f: f64) -> bool {
    const MAX: f64 = 9_007_199_254_740_991.0;
    if !f.is_finite() || !(-MAX..=MAX).contains(&f) {
        return false;
    }
    let rounded = f.round();
    if f == rounded {
        return true;
    }
    if rounded == 0.0 {
        return false;
    }
    (f - rounded).abs() < 1e-9 * rounded.abs()
}

/// kube-openapi's `numberValidator` range check of a value against an
/// integer schema: its error has no field, as the real server reports it.
pub(super) fn checked_range(n: &serde_json::Number, format: &str, path: &str) -> Option<Cause> {
    let text = match (n.as_i64(), n.as_f64()) {
        (Some(i), _) => i.to_string(),
        (None, Some(f)) => format!("{f}"),
        (None, None) => n.to_string(),
    };
    let message = outside_integer_format(&text, format, "Checked", &err_field(path))?;
    Some(Cause::new(
        "FieldValueInvalid",
        "<nil>",
        format!("Invalid value: \"\": {message}"),
    ))
}

/// kube-openapi's `IsValueValidAgainstRange` for an integer schema, which
/// the real server applies to each integer value (prefix `Checked`) and to
/// each bound of the schema (`Minimum boundary`, `Maximum boundary`): the
/// number's decimal text (a float in Go's shortest `'f'` form) must parse
/// as the format's integer (`format` as [`kept_format`] leaves it). The
/// message when it does not.
fn outside_integer_format(text: &str, format: &str, prefix: &str, path: &str) -> Option<String> {
    let fits = match format {
        "int32" => text.parse::<i32>().is_ok(),
        _ => text.parse::<i64>().is_ok(),
    };
    if fits {
        return None;
    }
    let what = if format.is_empty() {
        "integer (default format)".to_owned()
    } else {
        format!("integer with format {format}")
    };
    Some(format!("{prefix} value must be of type {what} in {path}"))
}

/// Numbers as the real server decodes a custom resource
/// (`util/json.ConvertInterfaceNumbers`): an integer literal within int64
/// stays one, anything else is a float64 (an integer beyond int64 too).
pub fn go_decode_numbers(v: &mut Value) {
    match v {
        Value::Number(n) if !n.is_i64() => {
            if let Some(f) = n.as_f64().and_then(serde_json::Number::from_f64) {
                *n = f;
            }
        }
        Value::Array(a) => a.iter_mut().for_each(go_decode_numbers),
        Value::Object(m) => m.values_mut().for_each(go_decode_numbers),
        _ => {}
    }
}

/// Numbers as the real server stores and serves them: a float64 with an
/// integral value is written without a fraction (Go's encoding/json
/// `'f'` form below 1e21), so every reader gets `1`, not `1.0`.
pub fn go_encode_numbers(v: &mut Value) {
    match v {
        Value::Number(n) => {
            if let Some(f) = n
                .as_f64()
                .filter(|f| n.is_f64() && f.fract() == 0.0 && f.abs() < 1e21)
            {
                if f.abs() < i64::MAX as f64 {
                    *n = (f as i64).into();
                } else if f > 0.0 && f < u64::MAX as f64 {
                    *n = (f as u64).into();
                }
            }
        }
        Value::Array(a) => a.iter_mut().for_each(go_encode_numbers),
        Value::Object(m) => m.values_mut().for_each(go_encode_numbers),
        _ => {}
    }
}

pub(super) fn enum_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        _ => a == b,
    }
}

pub(super) fn type_invalid(path: &str, want: &str, actual: &str) -> Cause {
    Cause::new(
        "FieldValueTypeInvalid",
        err_field(path),
        format!(
            "Invalid value: {}: {} in body must be of type {want}: {}",
            quote(actual),
            path,
            quote(actual)
        ),
    )
}

pub(super) fn enum_fail(path: &str, v: &Value, allowed: &[Value]) -> Cause {
    let values: Vec<String> = allowed
        .iter()
        .map(|a| match a {
            Value::String(s) => quote(s),
            other => quote(&other.to_string()),
        })
        .collect();
    Cause::new(
        "FieldValueNotSupported",
        err_field(path),
        format!(
            "Unsupported value: {}: supported values: {}",
            go_value(v),
            values.join(", ")
        ),
    )
}

pub(super) fn int_kw(s: &Value, k: &str) -> Option<i64> {
    s.get(k)
        .and_then(|v| v.as_i64().or_else(|| v.as_f64().map(|f| f as i64)))
}

pub(super) fn validate_string(s: &Value, st: &str, path: &str, errs: &mut Vec<Cause>) {
    let len = st.chars().count() as i64;
    if let Some(max) = int_kw(s, "maxLength")
        && len > max
    {
        let unit = if max == 1 { "byte" } else { "bytes" };
        errs.push(Cause::new(
            "FieldValueTooLong",
            err_field(path),
            format!("Too long: may not be more than {max} {unit}"),
        ));
        return;
    }
    if let Some(min) = int_kw(s, "minLength")
        && len < min
    {
        errs.push(invalid(
            path,
            quote(st),
            format!("{path} in body should be at least {min} chars long"),
        ));
        return;
    }
    if let Some(p) = s.get("pattern").and_then(Value::as_str) {
        match go_regex(p) {
            Ok(re) if re.is_match(st) => {}
            Ok(_) => errs.push(invalid(
                path,
                quote(st),
                format!("{path} in body should match '{p}'"),
            )),
            Err(e) => errs.push(invalid(
                path,
                quote(st),
                format!("{path} in body should match '{p}, but pattern is invalid: {e}'"),
            )),
        }
    }
}

/// Compiles a pattern with Go's RE2 semantics (the real server's `regexp`):
/// Perl classes `\d \w \s` and `\b` are ASCII-only there, Unicode-aware in
/// the `regex` crate, so they are rewritten. Compiled patterns are cached.
pub(crate) fn go_regex(p: &str) -> Result<regex::Regex, regex::Error> {
    use std::collections::HashMap;
    use std::sync::{Mutex, OnceLock};
    static CACHE: OnceLock<Mutex<HashMap<String, regex::Regex>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    if let Some(re) = cache.lock().ok().and_then(|c| c.get(p).cloned()) {
        return Ok(re);
    }
    let mut out = String::with_capacity(p.len());
    let mut chars = p.chars().peekable();
    let mut in_class = false;
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                let Some(n) = chars.next() else {
                    out.push('\\');
                    break;
                };
                let class = match n {
                    'd' => Some("0-9"),
                    'w' => Some("0-9A-Za-z_"),
                    's' => Some("\\t\\n\\f\\r "),
                    _ => None,
                };
                let negated = match n {
                    'D' => Some("0-9"),
                    'W' => Some("0-9A-Za-z_"),
                    'S' => Some("\\t\\n\\f\\r "),
                    _ => None,
                };
                match (class, negated, n) {
                    (Some(c), _, _) => out.push_str(&format!("[{c}]")),
                    (_, Some(c), _) => out.push_str(&format!("[^{c}]")),
                    (_, _, 'b' | 'B') if !in_class => out.push_str(&format!("(?-u:\\{n})")),
                    _ => {
                        out.push('\\');
                        out.push(n);
                    }
                }
            }
            '[' if !in_class => {
                in_class = true;
                out.push(c);
                // A leading `]` (or `^]`) is a literal in the class.
                if chars.peek() == Some(&'^') {
                    out.push(chars.next().unwrap_or('^'));
                }
                if chars.peek() == Some(&']') {
                    chars.next();
                    out.push_str("\\]");
                }
            }
            ']' if in_class => {
                in_class = false;
                out.push(c);
            }
            _ => out.push(c),
        }
    }
    let re = regex::Regex::new(&out)?;
    if let Ok(mut c) = cache.lock() {
        c.insert(p.to_string(), re.clone());
    }
    Ok(re)
}

/// The formats the real server checks (others are ignored, as it strips them).
pub(super) fn format_ok(format: &str, v: &str) -> Option<bool> {
    static UUID: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let normalized: String = format.chars().filter(|c| *c != '-' && *c != '_').collect();
    Some(match normalized.to_ascii_lowercase().as_str() {
        "datetime" => is_date_time(v),
        "date" => is_date(v),
        "uuid" => UUID
            .get_or_init(|| {
                regex::Regex::new(
                    "(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$",
                )
                .expect("static regex")
            })
            .is_match(v),
        "ipv4" => v.parse::<std::net::Ipv4Addr>().is_ok(),
        "ipv6" => v.parse::<std::net::Ipv6Addr>().is_ok(),
        "cidr" => v.split_once('/').is_some_and(|(ip, bits)| {
            let max = if ip.parse::<std::net::Ipv4Addr>().is_ok() {
                32
            } else if ip.parse::<std::net::Ipv6Addr>().is_ok() {
                128
            } else {
                return false;
            };
            bits.parse::<u8>().is_ok_and(|b| b <= max)
        }),
        "hostname" => {
            !v.is_empty()
                && v.len() <= 255
                && v.split('.').all(|l| {
                    !l.is_empty()
                        && l.len() <= 63
                        && !l.starts_with('-')
                        && !l.ends_with('-')
                        && l.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
                })
        }
        "byte" => {
            use base64::Engine;
            base64::engine::general_purpose::STANDARD.decode(v).is_ok()
        }
        "k8sshortname" => crate::selector::is_dns1123_label(v) && v.len() <= 63,
        "k8slongname" => crate::selector::is_dns1123_subdomain(v) && v.len() <= 253,
        "password" => true,
        _ => return None,
    })
}

/// kube-openapi's strfmt `IsDate`: Go's `time.Parse("2006-01-02", …)`, a
/// real day of a real month, four-digit year.
fn is_date(v: &str) -> bool {
    let b = v.as_bytes();
    let digits = |r: std::ops::Range<usize>| b[r].iter().all(u8::is_ascii_digit);
    if b.len() != 10
        || b[4] != b'-'
        || b[7] != b'-'
        || !digits(0..4)
        || !digits(5..7)
        || !digits(8..10)
    {
        return false;
    }
    let num = |r: std::ops::Range<usize>| v[r].parse::<u32>().unwrap_or(0);
    let (year, month, day) = (num(0..4), num(5..7), num(8..10));
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    let days = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    (1..=days).contains(&day)
}

/// kube-openapi's strfmt `IsDateTime`, which the real server checks
/// `format: date-time` with, quirks included: the text is lowercased and
/// split at every `t`; the first part must be a date ([`is_date`]), the
/// second `HH:MM:SS`, then one *any* character and digits (so `05x5`, and
/// any number of fraction digits), then `z` or an offset `±HH:MM` of any
/// two digits each; whatever follows a further `t` is not looked at.
/// Hours up to 23, minutes and seconds up to 59.
fn is_date_time(v: &str) -> bool {
    static TIME: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    if v.len() < 4 {
        return false;
    }
    let lower = v.to_lowercase();
    let mut parts = lower.split('t');
    let (Some(date), Some(time)) = (parts.next(), parts.next()) else {
        return false;
    };
    if !is_date(date) {
        return false;
    }
    let re = TIME.get_or_init(|| {
        regex::Regex::new("^([0-9]{2}):([0-9]{2}):([0-9]{2})(.[0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))$")
            .expect("static regex")
    });
    re.captures(time)
        .is_some_and(|m| &m[1] <= "23" && &m[2] <= "59" && &m[3] <= "59")
}

pub(super) fn validate_format(s: &Value, st: &str, path: &str, errs: &mut Vec<Cause>) {
    let Some(f) = s
        .get("format")
        .and_then(Value::as_str)
        .filter(|f| !f.is_empty())
    else {
        return;
    };
    if format_ok(f, st) == Some(false) {
        errs.push(Cause::new(
            "FieldValueTypeInvalid",
            err_field(path),
            format!(
                "Invalid value: {}: {path} in body must be of type {f}: {}",
                quote(st),
                quote(st)
            ),
        ));
    }
}

pub(super) fn validate_number(
    s: &Value,
    n: &serde_json::Number,
    path: &str,
    errs: &mut Vec<Cause>,
) {
    let is_int = n.is_i64() || n.is_u64();
    let data = n.as_f64().unwrap_or_default();
    // Bounds print as the value's Go type: int64 bounds for integers.
    let bound = |b: f64| {
        if is_int {
            (b as i64).to_string()
        } else {
            go_float(b)
        }
    };
    if let Some(m) = s.get("multipleOf").and_then(Value::as_f64)
        && m > 0.0
    {
        let ok = if is_int && m.fract() == 0.0 {
            n.as_i64().unwrap_or_default() % (m as i64) == 0
        } else {
            let mult = if m < 1.0 { 1.0 / m * data } else { data / m };
            mult.fract() == 0.0
        };
        if !ok {
            errs.push(invalid(
                path,
                go_number(n),
                format!("{path} in body should be a multiple of {}", bound(m)),
            ));
        }
    }
    // A bound of an integer must be a value of the integer's format, as
    // kube-openapi checks it (`IsValueValidAgainstRange`) on every value it
    // validates: i64::MAX stored as the float 2^63 is no int64, so a real
    // server refuses each write carrying the field and compares nothing.
    let bound_ok = |b: f64, name: &str, errs: &mut Vec<Cause>| {
        let types = types_of(s);
        if !types.contains(&"integer") {
            return true;
        }
        let (field, rest) = path.split_once('.').unwrap_or((path, path));
        let prefix = format!("{name} boundary");
        match outside_integer_format(&format!("{b}"), kept_format(s, &types), &prefix, rest) {
            None => true,
            Some(message) => {
                errs.push(invalid(field, "\"\"".into(), message));
                false
            }
        }
    };
    if let Some(min) = s.get("minimum").and_then(Value::as_f64)
        && bound_ok(min, "Minimum", errs)
    {
        let excl = flag(s, "exclusiveMinimum");
        let (value, min_cmp) = if is_int {
            (data, (min as i64) as f64)
        } else {
            (data, min)
        };
        if (!excl && value < min_cmp) || (excl && value <= min_cmp) {
            let op = if excl {
                "greater than"
            } else {
                "greater than or equal to"
            };
            errs.push(invalid(
                path,
                go_number(n),
                format!("{path} in body should be {op} {}", bound(min)),
            ));
        }
    }
    if let Some(max) = s.get("maximum").and_then(Value::as_f64)
        && bound_ok(max, "Maximum", errs)
    {
        let excl = flag(s, "exclusiveMaximum");
        let max_cmp = if is_int { (max as i64) as f64 } else { max };
        if (!excl && data > max_cmp) || (excl && data >= max_cmp) {
            let op = if excl {
                "less than"
            } else {
                "less than or equal to"
            };
            errs.push(invalid(
                path,
                go_number(n),
                format!("{path} in body should be {op} {}", bound(max)),
            ));
        }
    }
}

pub(super) fn validate_array(
    s: &Value,
    a: &[Value],
    old: Option<&Vec<Value>>,
    path: &str,
    errs: &mut Vec<Cause>,
) {
    if let Some(items) = s.get("items").filter(|i| i.is_object()) {
        for (i, v) in a.iter().enumerate() {
            let ov = old.and_then(|o| cel::correlate(s, v, o));
            validate_value(items, v, ov, &format!("{path}[{i}]"), errs);
        }
    }
    let size = a.len() as i64;
    if let Some(min) = int_kw(s, "minItems")
        && size < min
    {
        errs.push(invalid(
            path,
            size.to_string(),
            format!("{path} in body should have at least {min} items"),
        ));
    }
    if let Some(max) = int_kw(s, "maxItems")
        && size > max
    {
        let unit = if max == 1 { "item" } else { "items" };
        errs.push(Cause::new(
            "FieldValueTooMany",
            err_field(path),
            format!("Too many: {size}: must have at most {max} {unit}"),
        ));
    }
    if flag(s, "uniqueItems") && a.iter().enumerate().any(|(i, x)| a[..i].contains(x)) {
        errs.push(invalid(
            path,
            "\"\"".into(),
            format!("{path} in body shouldn't contain duplicates"),
        ));
    }
}

pub(super) fn validate_object(
    s: &Value,
    m: &Map<String, Value>,
    old: Option<&Map<String, Value>>,
    path: &str,
    errs: &mut Vec<Cause>,
) {
    let granular = s.get("x-kubernetes-map-type").and_then(Value::as_str) != Some("atomic");
    let old = old.filter(|_| granular);
    let n = m.len() as i64;
    if let Some(min) = int_kw(s, "minProperties")
        && n < min
    {
        errs.push(invalid(
            path,
            n.to_string(),
            format!("{path} in body should have at least {min} properties"),
        ));
    }
    if let Some(max) = int_kw(s, "maxProperties")
        && n > max
    {
        let unit = if max == 1 { "item" } else { "items" };
        errs.push(Cause::new(
            "FieldValueTooMany",
            err_field(path),
            format!("Too many: {n}: must have at most {max} {unit}"),
        ));
    }
    let props = s.get("properties").and_then(Value::as_object);
    if let Some(a) = additional(s) {
        for (k, v) in m {
            if props.is_some_and(|p| p.contains_key(k)) {
                continue;
            }
            validate_value(
                a,
                v,
                old.and_then(|o| o.get(k)),
                &format!("{path}.{k}"),
                errs,
            );
        }
    }
    if let Some(props) = props {
        for (k, ps) in props {
            if let Some(v) = m.get(k) {
                validate_value(
                    ps,
                    v,
                    old.and_then(|o| o.get(k)),
                    &child_name(path, k),
                    errs,
                );
            }
        }
    }
    if let Some(req) = s.get("required").and_then(Value::as_array) {
        for k in req.iter().filter_map(Value::as_str) {
            if !m.contains_key(k) {
                errs.push(Cause::new(
                    "FieldValueRequired",
                    err_field(&format!("{path}.{k}")),
                    "Required value",
                ));
            }
        }
    }
}

// ---------------------------------------------------------------------------
// x-kubernetes-list-type uniqueness

pub(super) fn list_types(s: &Value, v: &Value, path: &FieldPath, errs: &mut Vec<Cause>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                if let Some(p) = prop(s, k) {
                    list_types(p, x, &path.child(k), errs);
                } else if let Some(a) = additional(s) {
                    list_types(a, x, &path.key(k), errs);
                }
            }
        }
        Value::Array(a) => {
            match s.get("x-kubernetes-list-type").and_then(Value::as_str) {
                Some("set") => {
                    for i in first_duplicates(a) {
                        errs.push(duplicate(&path.index(i), &a[i]));
                    }
                }
                Some("map") => list_map(s, a, path, errs),
                _ => {}
            }
            if let Some(items) = s.get("items") {
                for (i, x) in a.iter().enumerate() {
                    list_types(items, x, &path.index(i), errs);
                }
            }
        }
        _ => {}
    }
}

/// Indices where a value is seen for the second time (later repeats are not reported).
pub(super) fn first_duplicates(a: &[Value]) -> Vec<usize> {
    let mut out = Vec::new();
    for i in 0..a.len() {
        let earlier = a[..i].iter().filter(|x| enum_equal(x, &a[i])).count();
        if earlier == 1 {
            out.push(i);
        }
    }
    out
}

pub(super) fn duplicate(path: &FieldPath, v: &Value) -> Cause {
    Cause::new(
        "FieldValueDuplicate",
        path.render(),
        format!("Duplicate value: {}", go_value(v)),
    )
}

pub(super) fn list_map(s: &Value, a: &[Value], path: &FieldPath, errs: &mut Vec<Cause>) {
    for (i, x) in a.iter().enumerate() {
        if !x.is_object() && !x.is_null() {
            errs.push(Cause::new(
                "FieldValueInvalid",
                path.index(i).render(),
                format!(
                    "Invalid value: {}: must be an object for an array of list-type map",
                    go_value(x)
                ),
            ));
            return;
        }
    }
    let keys: Vec<&str> = s
        .get("x-kubernetes-list-map-keys")
        .and_then(Value::as_array)
        .map(|k| k.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let key_values: Vec<Value> = a
        .iter()
        .map(|x| {
            let mut m = Map::new();
            for k in &keys {
                if let Some(v) = x.get(*k) {
                    m.insert((*k).to_string(), v.clone());
                }
            }
            Value::Object(m)
        })
        .collect();
    for i in first_duplicates(&key_values) {
        errs.push(duplicate(&path.index(i), &key_values[i]));
    }
}
