//! Where in a policy document its error is, for the policy editors: the line and column the error points at.
//!
//! A document that is not JSON has the position of the JSON parser. A well-formed one that the policy language
//! refuses has a message that names the element (`Statement[1].Action: unknown action "oss:GetTabel"`): its
//! position is that of the quoted value when the message quotes one, else of the element's key within its
//! statement, else the document's start.

use serde_json::Value;

/// A refused policy document: the message, and where (1-based line and column).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct PolicyProblem {
    pub message: String,
    pub line: usize,
    pub column: usize,
}

/// Locates `message`, the reason `document` was refused.
pub(super) fn locate(document: &str, message: &str) -> PolicyProblem {
    let (line, column) = match serde_json::from_str::<Value>(document) {
        Err(e) if e.line() > 0 => (e.line(), e.column().max(1)),
        _ => offset_of(document, message)
            .map(|offset| line_column(document, offset))
            .unwrap_or((1, 1)),
    };
    PolicyProblem {
        message: message.to_string(),
        line,
        column,
    }
}

/// The byte offset the message points at.
fn offset_of(document: &str, message: &str) -> Option<usize> {
    // The services prefix the policy language's message (`Invalid resource policy: Statement[0]…`).
    let message = message
        .split_once(": ")
        .filter(|(prefix, _)| prefix.starts_with("Invalid "))
        .map_or(message, |(_, rest)| rest);
    let statement_start = statement_index(message).and_then(|i| nth_statement(document, i));
    let from = statement_start.unwrap_or(0);
    let tail = document.get(from..)?;
    // A quoted value in the message: find it as a JSON string in the document.
    if let Some(quoted) = first_quoted(message)
        && let Some(at) = tail.find(&format!("\"{quoted}\""))
    {
        return Some(from + at);
    }
    // The element named before the colon (`Statement[0].Condition.StringEquals: …`): its key.
    let path = message.split(':').next().unwrap_or_default();
    for key in path.rsplit('.') {
        let key = key.split('[').next().unwrap_or_default();
        if !key.is_empty()
            && let Some(at) = tail.find(&format!("\"{key}\""))
        {
            return Some(from + at);
        }
    }
    statement_start
}

/// `i` of a message that starts `Statement[i]`.
fn statement_index(message: &str) -> Option<usize> {
    let rest = message.strip_prefix("Statement[")?;
    rest.split(']').next()?.parse().ok()
}

/// The offset of the `i`-th object of the top-level `Statement` array (or of a single statement object).
fn nth_statement(document: &str, i: usize) -> Option<usize> {
    let key = document.find("\"Statement\"")?;
    let after = document.get(key..)?;
    let bracket = after.find(['[', '{'])?;
    let mut depth = 0usize;
    let mut seen = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    let start = key + bracket;
    for (offset, c) in document.get(start..)?.char_indices() {
        if in_string {
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => in_string = true,
            '[' | '{' => {
                if c == '{' && depth <= 1 {
                    if seen == i {
                        return Some(start + offset);
                    }
                    seen += 1;
                }
                depth += 1;
            }
            ']' | '}' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return None;
                }
            }
            _ => {}
        }
    }
    None
}

/// The first `"…"` of a message.
fn first_quoted(message: &str) -> Option<&str> {
    let start = message.find('"')? + 1;
    let len = message.get(start..)?.find('"')?;
    message.get(start..start + len).filter(|q| !q.is_empty())
}

/// 1-based line and column (in characters) of a byte offset.
fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let before = text.get(..offset).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let column = before
        .rsplit('\n')
        .next()
        .unwrap_or_default()
        .chars()
        .count()
        + 1;
    (line, column)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_errors_have_the_parser_position() {
        let problem = locate(
            "{\n  \"Version\": \"2012-10-17\",\n  \"Statement\": [\n}",
            "bad",
        );
        assert_eq!((problem.line, problem.column), (4, 1));
    }

    #[test]
    fn policy_errors_point_at_the_value() {
        let document = r#"{
  "Version": "2012-10-17",
  "Statement": [
    {"Effect": "Allow", "Principal": "*", "Action": "oss:GetTable", "Resource": "*"},
    {"Effect": "Allow", "Principal": "*",
     "Action": "oss:GetTabel", "Resource": "*"}
  ]
}"#;
        let problem = locate(
            document,
            "Invalid resource policy: Statement[1].Action: unknown action \"oss:GetTabel\"",
        );
        assert_eq!((problem.line, problem.column), (6, 16));
        let by_key = locate(document, "Statement[1].Resource: not an ARN");
        assert_eq!((by_key.line, by_key.column), (6, 32));
        let nothing = locate(document, "the policy is too permissive");
        assert_eq!((nothing.line, nothing.column), (1, 1));
    }

    #[test]
    fn positions_in_characters() {
        assert_eq!(line_column("é\nab", 4), (2, 2));
        assert_eq!(first_quoted("x \"a\" \"b\""), Some("a"));
        assert_eq!(statement_index("Statement[12].Effect: x"), Some(12));
    }
}
