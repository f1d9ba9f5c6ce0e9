//! The one error of this crate: why a policy document was refused, worded for a 400 answer.

/// A policy document that cannot be accepted. `Display` is a message fit to send to the client as is
/// (`Statement[1].Action: unknown action "oss:GetTabel"`).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct PolicyError {
    message: String,
}

impl PolicyError {
    pub(crate) fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
        }
    }

    /// Prefixes the message with where in the document the problem is.
    pub(crate) fn at(self, place: &str) -> Self {
        Self {
            message: format!("{place}: {}", self.message),
        }
    }

    /// The message.
    pub fn message(&self) -> &str {
        &self.message
    }
}
