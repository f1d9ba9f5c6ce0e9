//! Unit tests of the commit logic.
