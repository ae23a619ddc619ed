//! CEL lexer: source text to tokens with their byte offsets.

#[derive(Debug, Clone, PartialEq)]
pub(super) enum Tok {
    Int(i64),
    Uint(u64),
    Double(f64),
    Str(String),
    Ident(String),
    Op(&'static str),
    End,
}

pub(super) fn lex(src: &str) -> Result<Vec<(Tok, usize)>, String> {
    let chars: Vec<char> = src.chars().collect();
    let mut i = 0;
    let mut out = Vec::new();
    const OPS: [&str; 25] = [
        "&&", "||", "==", "!=", "<=", ">=", "!", "<", ">", "+", "-", "*", "/", "%", "?", ":", ".",
        ",", "(", ")", "[", "]", "{", "}", "=",
    ];
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
            continue;
        }
        let start = i;
        if c.is_ascii_digit() || (c == '.' && chars.get(i + 1).is_some_and(|d| d.is_ascii_digit()))
        {
            if c == '0' && matches!(chars.get(i + 1), Some('x' | 'X')) {
                i += 2;
                let s = i;
                while i < chars.len() && chars[i].is_ascii_hexdigit() {
                    i += 1;
                }
                let h: String = chars[s..i].iter().collect();
                let v =
                    i64::from_str_radix(&h, 16).map_err(|e| syntax(src, start, &e.to_string()))?;
                if matches!(chars.get(i), Some('u' | 'U')) {
                    i += 1;
                    out.push((Tok::Uint(v as u64), start));
                } else {
                    out.push((Tok::Int(v), start));
                }
                continue;
            }
            let mut is_double = false;
            while i < chars.len() && chars[i].is_ascii_digit() {
                i += 1;
            }
            if i < chars.len()
                && chars[i] == '.'
                && chars.get(i + 1).is_some_and(|d| d.is_ascii_digit())
            {
                is_double = true;
                i += 1;
                while i < chars.len() && chars[i].is_ascii_digit() {
                    i += 1;
                }
            }
            if i < chars.len() && matches!(chars[i], 'e' | 'E') {
                is_double = true;
                i += 1;
                if i < chars.len() && matches!(chars[i], '+' | '-') {
                    i += 1;
                }
                while i < chars.len() && chars[i].is_ascii_digit() {
                    i += 1;
                }
            }
            let text: String = chars[start..i].iter().collect();
            if is_double {
                let d = text
                    .parse::<f64>()
                    .map_err(|e| syntax(src, start, &e.to_string()))?;
                out.push((Tok::Double(d), start));
            } else if matches!(chars.get(i), Some('u' | 'U')) {
                i += 1;
                let u = text
                    .parse::<u64>()
                    .map_err(|e| syntax(src, start, &e.to_string()))?;
                out.push((Tok::Uint(u), start));
            } else {
                let v = text
                    .parse::<i64>()
                    .map_err(|e| syntax(src, start, &e.to_string()))?;
                out.push((Tok::Int(v), start));
            }
            continue;
        }
        let raw = matches!(c, 'r' | 'R') && matches!(chars.get(i + 1), Some('"' | '\''));
        if c == '"' || c == '\'' || raw {
            if raw {
                i += 1;
            }
            let q = chars[i];
            let triple = chars.get(i + 1) == Some(&q) && chars.get(i + 2) == Some(&q);
            i += if triple { 3 } else { 1 };
            let mut s = String::new();
            loop {
                if i >= chars.len() {
                    return Err(syntax(src, start, "token recognition error"));
                }
                if triple {
                    if chars[i] == q && chars.get(i + 1) == Some(&q) && chars.get(i + 2) == Some(&q)
                    {
                        i += 3;
                        break;
                    }
                } else if chars[i] == q {
                    i += 1;
                    break;
                }
                if chars[i] == '\\' && !raw {
                    i += 1;
                    let e = *chars
                        .get(i)
                        .ok_or_else(|| syntax(src, start, "token recognition error"))?;
                    s.push(match e {
                        'n' => '\n',
                        't' => '\t',
                        'r' => '\r',
                        '\\' => '\\',
                        '"' => '"',
                        '\'' => '\'',
                        '`' => '`',
                        '?' => '?',
                        'a' => '\u{7}',
                        'b' => '\u{8}',
                        'f' => '\u{c}',
                        'v' => '\u{b}',
                        'u' | 'x' => {
                            let n = if e == 'u' { 4 } else { 2 };
                            let h: String = chars
                                .get(i + 1..i + 1 + n)
                                .unwrap_or_default()
                                .iter()
                                .collect();
                            i += n;
                            u32::from_str_radix(&h, 16)
                                .ok()
                                .and_then(char::from_u32)
                                .ok_or_else(|| syntax(src, start, "invalid escape"))?
                        }
                        _ => return Err(syntax(src, start, "invalid escape")),
                    });
                    i += 1;
                    continue;
                }
                s.push(chars[i]);
                i += 1;
            }
            out.push((Tok::Str(s), start));
            continue;
        }
        if c.is_alphabetic() || c == '_' {
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            out.push((Tok::Ident(chars[start..i].iter().collect()), start));
            continue;
        }
        let rest: String = chars[i..chars.len().min(i + 2)].iter().collect();
        match OPS.iter().find(|op| rest.starts_with(**op)) {
            Some(op) if *op != "=" => {
                i += op.chars().count();
                out.push((Tok::Op(op), start));
            }
            _ => {
                return Err(syntax(
                    src,
                    start,
                    &format!("token recognition error at: '{c}'"),
                ));
            }
        }
    }
    out.push((Tok::End, chars.len()));
    Ok(out)
}

pub(super) fn syntax(src: &str, pos: usize, msg: &str) -> String {
    let before: String = src.chars().take(pos).collect();
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count());
    format!("ERROR: <input>:{line}:{}: Syntax error: {msg}", col + 1)
}
