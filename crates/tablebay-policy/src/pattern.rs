//! IAM wildcards: `*` matches any run of characters (none included), `?` exactly one; everything else is literal.
//! Used for actions (case-insensitive), resources, ARNs and `*Like` conditions (case-sensitive).

/// Whether `text` matches the wildcard `pattern`.
///
/// The classic greedy matcher with one backtrack point: O(len(pattern) · len(text)) at worst and no recursion, so
/// a hostile pattern cannot blow the stack or take exponential time.
pub(crate) fn wildcard_match(pattern: &str, text: &str, ignore_case: bool) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = text.chars().collect();
    let eq = |a: char, b: char| {
        if ignore_case {
            a.to_lowercase().eq(b.to_lowercase())
        } else {
            a == b
        }
    };
    let (mut pi, mut ti) = (0usize, 0usize);
    // The position after the last `*` seen, and the text position it is currently matched up to.
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        match p.get(pi) {
            Some('*') => {
                star = Some((pi + 1, ti));
                pi += 1;
            }
            Some(&c) if c == '?' || t.get(ti).is_some_and(|&tc| eq(c, tc)) => {
                pi += 1;
                ti += 1;
            }
            _ => match star {
                Some((sp, st)) => {
                    pi = sp;
                    ti = st + 1;
                    star = Some((sp, st + 1));
                }
                None => return false,
            },
        }
    }
    p.get(pi..)
        .is_some_and(|rest| rest.iter().all(|&c| c == '*'))
}

#[cfg(test)]
mod tests {
    use super::wildcard_match;

    #[test]
    fn wildcards() {
        for (pattern, text, ok) in [
            ("*", "", true),
            ("*", "anything", true),
            ("", "", true),
            ("", "a", false),
            ("a", "a", true),
            ("a", "A", false),
            ("?", "", false),
            ("?", "x", true),
            ("a?c", "abc", true),
            ("a?c", "ac", false),
            ("Get*", "GetTable", true),
            ("Get*", "Get", true),
            ("*Table", "GetTable", true),
            ("*Table", "GetTableData", false),
            // A wildcard in the middle.
            ("bucket/*/table/*", "bucket/b/table/t", true),
            ("bucket/*/table/*", "bucket/b/x/table/t", true),
            ("bucket/*/table/*", "bucket/b", false),
            ("a*b*c", "aXXbYYc", true),
            ("a*b*c", "aXXbYY", false),
            ("a*b?c", "ab-bxc", true),
            ("**", "x", true),
            ("*?", "", false),
            ("*?", "x", true),
            ("héllo*", "héllo wörld", true),
            ("h?llo", "héllo", true),
        ] {
            assert_eq!(
                wildcard_match(pattern, text, false),
                ok,
                "{pattern:?} ~ {text:?}"
            );
        }
        assert!(wildcard_match("oss:get*", "OSS:GetTable", true));
        assert!(!wildcard_match("oss:get*", "OSS:GetTable", false));
    }

    #[test]
    fn no_blow_up_on_many_stars() {
        let pattern = "*a".repeat(2000) + "b";
        let text = "a".repeat(4000);
        assert!(!wildcard_match(&pattern, &text, false));
    }
}
