//! The shutdown signal: one token for the process, child tokens per component, so stopping a
//! component (e.g. on lost leadership) never stops its parent.

use tokio_util::sync::CancellationToken;

/// A cancellable scope. Clones share the same scope; [`Shutdown::child`] makes a sub-scope that
/// is cancelled with its parent but may also be cancelled alone.
#[derive(Debug, Clone, Default)]
pub struct Shutdown {
    token: CancellationToken,
}

impl Shutdown {
    pub fn new() -> Self {
        Self::default()
    }

    /// A sub-scope: cancelled when `self` is, or on its own.
    pub fn child(&self) -> Self {
        Self {
            token: self.token.child_token(),
        }
    }

    /// Asks every task of this scope (and its children) to stop.
    pub fn cancel(&self) {
        self.token.cancel();
    }

    pub fn is_cancelled(&self) -> bool {
        self.token.is_cancelled()
    }

    /// Resolves once the scope is cancelled.
    pub async fn cancelled(&self) {
        self.token.cancelled().await;
    }

    /// The underlying token, for APIs that take one.
    pub fn token(&self) -> &CancellationToken {
        &self.token
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_child_stops_with_its_parent_but_not_the_reverse() {
        let root = Shutdown::new();
        let a = root.child();
        let b = root.child();
        a.cancel();
        assert!(a.is_cancelled());
        assert!(!root.is_cancelled() && !b.is_cancelled());
        root.cancel();
        b.cancelled().await;
        assert!(b.is_cancelled());
    }
}
