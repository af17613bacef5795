//! etcd-client's build script compiles etcd's `.proto` files with `protoc`. This crate's
//! build-dependency on `protoc-bin-vendored` makes cargo unpack a prebuilt protoc with the other
//! crates, before any build script runs, so `scripts/protoc` (PROTOC in `.cargo/config.toml`)
//! finds one on a machine without protobuf-compiler. Here we only check that one exists for
//! this platform, so a machine without either gets a warning naming the remedy.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    if let Err(error) = protoc_bin_vendored::protoc_bin_path() {
        println!(
            "cargo:warning=no prebuilt protoc for this platform ({error}); unless the machine \
             has protobuf-compiler or PROTOC names a protoc, etcd-client will not build"
        );
    }
}
