//! deploy/kubernetes, checked offline (no cluster exists here): `kubectl
//! kustomize` renders it, and the rendered objects say what the book says: a
//! Job of one pod per node and a client kept off the server's node (anti-
//! affinity on the hostname), Guaranteed pods with whole CPUs (requests equal
//! limits, integer CPUs: what the static CPU manager pins), the database URL
//! and token from the Secret the kustomization makes, and where each run came
//! from passed down (machine.scheduler). Skips with a reason without kubectl.

use std::path::Path;
use std::process::Command;

fn repo(rel: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(rel)
}

/// The rendered YAML of the kustomization in `dir` as documents.
fn rendered_in(dir: &str) -> Option<Vec<String>> {
    let out = Command::new("kubectl")
        .arg("kustomize")
        .arg(repo(dir))
        .output();
    let Ok(out) = out else {
        eprintln!("skipped: no kubectl (its kustomize renders the manifests offline)");
        return None;
    };
    assert!(
        out.status.success(),
        "kubectl kustomize: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    Some(text.split("\n---\n").map(str::to_string).collect())
}

fn kind(doc: &str) -> &str {
    doc.lines()
        .find_map(|l| l.strip_prefix("kind: "))
        .unwrap_or("")
}

fn name(doc: &str) -> &str {
    doc.lines()
        .skip_while(|l| !l.starts_with("metadata:"))
        .find_map(|l| l.trim().strip_prefix("name: "))
        .unwrap_or("")
}

/// The values under `key:` blocks of `resources` (requests or limits): cpu, memory.
fn block(doc: &str, key: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut lines = doc.lines().peekable();
    while let Some(l) = lines.next() {
        if l.trim() == format!("{key}:") {
            let indent = l.len() - l.trim_start().len();
            while let Some(n) = lines.peek() {
                let ni = n.len() - n.trim_start().len();
                if ni <= indent {
                    break;
                }
                if let Some((k, v)) = n.trim().split_once(": ") {
                    out.push((k.to_string(), v.trim_matches('"').to_string()));
                }
                lines.next();
            }
        }
    }
    out
}

/// The suite (deploy/kubernetes/) and the pair (deploy/kubernetes/pair/), which
/// are applied one after the other so they never measure on a node together.
fn rendered() -> Option<Vec<String>> {
    let mut docs = rendered_in("deploy/kubernetes")?;
    let kinds = |d: &[String]| {
        let mut k: Vec<(String, String)> = d
            .iter()
            .map(|d| (kind(d).to_string(), name(d).to_string()))
            .collect();
        k.sort();
        k
    };
    let owned = |v: &[(&str, &str)]| -> Vec<(String, String)> {
        v.iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect()
    };
    // The suite alone: no serve pod or client beside it.
    assert_eq!(
        kinds(&docs),
        owned(&[
            ("Job", "ipcperf-suite"),
            ("Namespace", "ipcperf"),
            ("Secret", "ipcperf"),
        ])
    );
    let pair = rendered_in("deploy/kubernetes/pair")?;
    assert_eq!(
        kinds(&pair),
        owned(&[
            ("Job", "ipcperf-pair"),
            ("Pod", "ipcperf-serve"),
            ("Service", "ipcperf-serve"),
        ])
    );
    for d in &pair {
        assert!(d.contains("namespace: ipcperf"), "{d}");
    }
    docs.extend(pair);
    Some(docs)
}

#[test]
fn the_kubernetes_manifests_render_and_say_what_pinning_needs() {
    let Some(docs) = rendered() else { return };
    for d in docs.iter().filter(|d| matches!(kind(d), "Job" | "Pod")) {
        let who = name(d);
        // Guaranteed, whole CPUs.
        let (req, lim) = (block(d, "requests"), block(d, "limits"));
        assert!(!req.is_empty(), "{who}: no requests");
        assert_eq!(req, lim, "{who}: requests must equal limits (Guaranteed)");
        let cpu = &req.iter().find(|(k, _)| k == "cpu").unwrap().1;
        assert!(cpu.parse::<u32>().is_ok_and(|c| c >= 2), "{who}: cpu {cpu}");
        // Secrets come from the Secret this kustomization makes, never inline.
        assert!(
            !d.contains("CHANGE-ME"),
            "{who}: a secret's value in a manifest"
        );
        for l in d
            .lines()
            .filter(|l| l.trim_start().starts_with("secretName:"))
        {
            assert_eq!(l.trim(), "secretName: ipcperf", "{who}");
        }
        assert!(d.contains("image: localhost/ipcperf:latest"), "{who}");
    }
    for job in docs.iter().filter(|d| kind(d) == "Job") {
        let who = name(job);
        assert!(job.contains("podAntiAffinity:"), "{who}");
        assert!(job.contains("topologyKey: kubernetes.io/hostname"), "{who}");
        for env in [
            "IPCPERF_DB",
            "IPCPERF_K8S_NODE",
            "IPCPERF_K8S_POD",
            "IPCPERF_K8S_JOB",
        ] {
            assert!(job.contains(&format!("name: {env}")), "{who}: {env}");
        }
        assert!(job.contains("fieldPath: spec.nodeName"), "{who}");
    }
    let suite = docs.iter().find(|d| name(d) == "ipcperf-suite").unwrap();
    assert!(suite.contains("completionMode: Indexed"));
    // The serve pod needs the token: it never serves without one.
    let serve = docs.iter().find(|d| kind(d) == "Pod").unwrap();
    assert!(serve.contains("--token-file"), "{serve}");
    let secret = docs.iter().find(|d| kind(d) == "Secret").unwrap();
    assert!(
        secret.contains("db-url:") && secret.contains("token:"),
        "{secret}"
    );
}

/// The image builds the one binary from this workspace.
#[test]
fn the_containerfile_builds_this_binary() {
    let text = std::fs::read_to_string(repo("deploy/kubernetes/Containerfile")).unwrap();
    assert!(text.contains("cargo build --release --locked -p ipcperf"));
    assert!(text.contains("ENTRYPOINT [\"/usr/local/bin/ipcperf\"]"));
    assert!(text.contains("USER ipcperf"), "not root inside");
}

/// The trial's PostgreSQL is the one the example database URL names: a Service
/// `postgres` in the namespace `ipcperf` on 5432, user and database `ipcperf`,
/// its password from a Secret of its own, never inline.
#[test]
fn the_trial_database_is_the_one_the_example_url_names() {
    let Some(docs) = rendered_in("deploy/kubernetes/trial-db") else {
        return;
    };
    let url = std::fs::read_to_string(repo("deploy/kubernetes/secret/db-url")).unwrap();
    let url = url.trim();
    // postgres://USER:PASSWORD@SERVICE.NAMESPACE.svc:PORT/DB
    let rest = url.strip_prefix("postgres://").unwrap();
    let (cred, at) = rest.split_once('@').unwrap();
    let (user, password) = cred.split_once(':').unwrap();
    let (host, db) = at.split_once('/').unwrap();
    let (host, port) = host.split_once(':').unwrap();
    let mut parts = host.split('.');
    let (service, namespace) = (parts.next().unwrap(), parts.next().unwrap());
    let svc = docs
        .iter()
        .find(|d| kind(d) == "Service" && name(d) == service)
        .unwrap_or_else(|| panic!("no Service {service}: {docs:?}"));
    assert!(svc.contains(&format!("namespace: {namespace}")), "{svc}");
    assert!(svc.contains(&format!("port: {port}")), "{svc}");
    let db_set = docs.iter().find(|d| kind(d) == "StatefulSet").unwrap();
    let lines: Vec<&str> = db_set.lines().map(str::trim).collect();
    for (k, v) in [("POSTGRES_USER", user), ("POSTGRES_DB", db)] {
        let at = lines
            .iter()
            .position(|l| *l == format!("- name: {k}"))
            .unwrap_or_else(|| panic!("no {k}: {db_set}"));
        assert_eq!(lines[at + 1], format!("value: {v}"), "{k}");
    }
    assert!(!db_set.contains(password), "the password inline: {db_set}");
    assert!(db_set.contains("name: ipcperf-postgres"), "{db_set}");
    let secret = docs
        .iter()
        .find(|d| kind(d) == "Secret" && name(d) == "ipcperf-postgres")
        .unwrap();
    assert!(secret.contains("password:"), "{secret}");
}
