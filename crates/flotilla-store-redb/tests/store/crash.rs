//! Crash safety: a child process runs a durable write storm and prints every acknowledged
//! write; the parent SIGKILLs it mid-storm, reopens the store and checks that every
//! acknowledged write survived and that the log has no hole.
//!
//! The child is this same test binary, run filtered to this test with [`CHILD_ENV`] naming the
//! store directory: in that role the test writes until it is killed.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use flotilla_store::{KeyRange, Op, RangeRequest, Store, Txn};
use flotilla_store_redb::{RedbOptions, RedbStore};
use futures::StreamExt;

/// Set in the child: the store directory and the round, as `DIR|ROUND`.
const CHILD_ENV: &str = "FLOTILLA_REDB_CRASH_CHILD";
const WRITERS: usize = 8;
/// Keys per writer: writes overwrite each other, so "a later value by the same writer" matters.
const KEYS_PER_WRITER: u64 = 16;
/// Acknowledged writes to wait for before each kill (one round each).
const KILL_AFTER: [usize; 3] = [1, 150, 700];
const TEST_NAME: &str = "store::crash::acknowledged_writes_survive_sigkill";

#[test]
fn acknowledged_writes_survive_sigkill() {
    if let Ok(spec) = std::env::var(CHILD_ENV) {
        let (dir, round) = spec.rsplit_once('|').expect("DIR|ROUND");
        write_until_killed(Path::new(dir), round.parse().expect("round number"));
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    for (round, kill_after) in KILL_AFTER.into_iter().enumerate() {
        let acks = run_child_and_kill(dir.path(), round, kill_after);
        assert!(
            acks.len() >= kill_after,
            "round {round}: only {} acks",
            acks.len()
        );
        verify(dir.path(), round, &acks);
    }
}

/// One acknowledged write, as the child reported it.
#[derive(Debug)]
struct Ack {
    writer: usize,
    seq: u64,
    revision: i64,
}

fn key(round: usize, writer: usize, seq: u64) -> String {
    format!("/crash/{round}/{writer}/{}", seq % KEYS_PER_WRITER)
}

fn run_child_and_kill(dir: &Path, round: usize, kill_after: usize) -> Vec<Ack> {
    let exe = std::env::current_exe().expect("test binary path");
    let mut child = Command::new(exe)
        .args([TEST_NAME, "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD_ENV, format!("{}|{round}", dir.display()))
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("start the child test process");
    let stdout = child.stdout.take().expect("piped stdout");
    let mut acks = Vec::new();
    for line in BufReader::new(stdout).lines() {
        let line = line.expect("read the child's output");
        let Some(rest) = line.strip_prefix("ack ") else {
            continue;
        };
        let fields: Vec<&str> = rest.split(' ').collect();
        assert_eq!(fields.len(), 3, "malformed ack line {line:?}");
        acks.push(Ack {
            writer: fields[0].parse().expect("writer"),
            seq: fields[1].parse().expect("seq"),
            revision: fields[2].parse().expect("revision"),
        });
        if acks.len() == kill_after {
            // SIGKILL on Unix: no destructor, no flush, like a power cut for the process.
            child.kill().expect("kill the child");
            break;
        }
    }
    let status = child.wait().expect("reap the child");
    assert!(
        !status.success(),
        "round {round}: the child exited by itself ({status}) before {kill_after} acks; \
         got {}",
        acks.len()
    );
    acks
}

/// The child: concurrent writers put values and print each acknowledgement at once.
fn write_until_killed(dir: &Path, round: usize) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async {
        let store = Arc::new(RedbStore::open(dir, RedbOptions::default()).expect("open store"));
        let out = Arc::new(std::sync::Mutex::new(std::io::stdout()));
        let mut tasks = Vec::new();
        for writer in 0..WRITERS {
            let store = store.clone();
            let out = out.clone();
            tasks.push(tokio::spawn(async move {
                for seq in 0.. {
                    let value = format!("{writer}:{seq}");
                    let response = store
                        .txn(Txn::new().and_then([Op::put(key(round, writer, seq), value)]))
                        .await
                        .expect("put");
                    let mut out = out.lock().expect("stdout lock");
                    writeln!(out, "ack {writer} {seq} {}", response.revision).expect("print");
                    out.flush().expect("flush");
                }
            }));
        }
        // Writers run until the parent kills the process; give up after a long time so that a
        // parent that died does not leave this running forever.
        tokio::time::sleep(Duration::from_secs(120)).await;
        panic!("the parent never killed the crash child");
    });
}

/// Reopens the store and checks the acknowledged writes and the log.
fn verify(dir: &Path, round: usize, acks: &[Ack]) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async {
        let store = RedbStore::open(dir, RedbOptions::default()).expect("reopen after the crash");
        let status = store.status().await.expect("status");
        let now = store
            .range(RangeRequest::prefix(format!("/crash/{round}/")))
            .await
            .expect("range");
        let values: BTreeMap<String, (String, i64)> = now
            .kvs
            .iter()
            .map(|kv| {
                (
                    String::from_utf8_lossy(&kv.key).into_owned(),
                    (
                        String::from_utf8_lossy(&kv.value).into_owned(),
                        kv.mod_revision,
                    ),
                )
            })
            .collect();
        for ack in acks {
            assert!(
                ack.revision <= status.revision,
                "round {round}: {ack:?} beyond {status:?}"
            );
            let key = key(round, ack.writer, ack.seq);
            let Some((value, revision)) = values.get(&key) else {
                panic!("round {round}: acknowledged {ack:?} lost: {key} is missing");
            };
            let (writer, seq) = value.split_once(':').expect("value writer:seq");
            assert_eq!(
                writer.parse::<usize>().expect("writer"),
                ack.writer,
                "{key}"
            );
            assert!(
                seq.parse::<u64>().expect("seq") >= ack.seq && *revision >= ack.revision,
                "round {round}: acknowledged {ack:?} lost: {key} holds {value} at {revision}"
            );
        }
        // Every revision since the first has its batch in the log.
        let mut stream = store.watch(KeyRange::all(), 1).await.expect("watch");
        let mut expected = 2.max(status.compacted_revision);
        while expected <= status.revision {
            let event = tokio::time::timeout(Duration::from_secs(20), stream.next())
                .await
                .expect("log replay in time")
                .expect("stream open")
                .expect("event");
            assert_eq!(
                event.revision(),
                expected,
                "round {round}: a hole in the log"
            );
            expected += 1;
        }
        // The counter continues past everything the crashed process used.
        let next = store
            .txn(Txn::new().and_then([Op::put(format!("/after/{round}"), "x")]))
            .await
            .expect("write after restart");
        assert_eq!(next.revision, status.revision + 1);
    });
}
