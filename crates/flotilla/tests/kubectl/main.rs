//! End to end with the real kubectl binaries (1.27, 1.30, 1.33) against `flotilla up` on a free
//! port. The machine's `kubectl` package ships them; `scripts/test` installs it.

mod harness;

mod apply;
mod auth;
mod crd;
mod events;
mod karmada;
mod lifecycle;
mod reads;
mod registration;
mod writes;
