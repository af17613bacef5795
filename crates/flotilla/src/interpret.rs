//! `flotilla interpret`: Karmada's `karmadactl interpret` (`pkg/karmadactl/interpret`) without
//! `--edit`. Checks ResourceInterpreterCustomizations before they are applied (`--check`: each
//! rule's script loads as Lua), or runs one operation locally on objects from files and prints
//! its results as YAML documents (`# [1/2] replica:` …), as karmadactl does.
//!
//! The rules run in Flotilla's interpreter chain short of webhooks: the given customizations
//! first, then the bundled third-party rules (docs/third-party-kinds.md). Without `-f` only the
//! bundled rules answer, which shows what the control plane does with an operator's kind.

use std::io::Read as _;
use std::path::{Path, PathBuf};

use anyhow::{Context as _, bail};
use flotilla_api::karmada::{
    AggregatedStatusItem, JsonText, Operation, ResourceInterpreterCustomization,
};
use flotilla_controllers::interpreter::Customizations;
use serde::Deserialize as _;
use serde_json::Value;

/// Options of `flotilla interpret`.
#[derive(Debug, clap::Args)]
pub struct InterpretArgs {
    /// Files holding ResourceInterpreterCustomizations (YAML or JSON; several documents each).
    #[arg(short = 'f', long = "filename")]
    pub filenames: Vec<PathBuf>,
    /// Check the customizations: target set, each rule's script loads.
    #[arg(long)]
    pub check: bool,
    /// The operation to run, case-insensitive: Retain, InterpretReplica, InterpretComponent,
    /// ReviseReplica, InterpretStatus, AggregateStatus, InterpretHealth, InterpretDependency.
    #[arg(long)]
    pub operation: Option<String>,
    /// The object to use as the rule's desiredObj.
    #[arg(long)]
    pub desired_file: Option<PathBuf>,
    /// The object to use as the rule's observedObj.
    #[arg(long)]
    pub observed_file: Option<PathBuf>,
    /// AggregatedStatusItems (`clusterName`, `status`, …; several documents or a list) for
    /// AggregateStatus; `-` reads them from standard input.
    #[arg(long)]
    pub status_file: Option<PathBuf>,
    /// The replicas ReviseReplica revises to.
    #[arg(long, default_value_t = 0)]
    pub desired_replica: i32,
}

/// Runs the command; the process's exit code.
pub async fn main(args: &InterpretArgs) -> i32 {
    match run(args).await {
        Ok(code) => code,
        Err(error) => {
            eprintln!("error: {error:#}");
            1
        }
    }
}

async fn run(args: &InterpretArgs) -> anyhow::Result<i32> {
    let sources = customizations(&args.filenames)?;
    if args.check {
        if args.filenames.is_empty() {
            bail!("--check needs the customizations to check (-f)");
        }
        let (report, failed) = check(&sources);
        print!("{report}");
        return Ok(if failed { 1 } else { 0 });
    }
    let Some(name) = &args.operation else {
        bail!("operation is not set for executing (--operation), or use --check");
    };
    let operation = operation(name)?;
    let parsed: Vec<ResourceInterpreterCustomization> = sources
        .into_iter()
        .map(|(_, parsed)| parsed)
        .collect::<Result<_, _>>()
        .map_err(|error| anyhow::anyhow!(error))?;
    let desired = args.desired_file.as_deref().map(object).transpose()?;
    let observed = args.observed_file.as_deref().map(object).transpose()?;
    let items = match &args.status_file {
        Some(path) => status_items(path)?,
        None => Vec::new(),
    };
    let customizations = Customizations::fixed(&parsed);
    match execute(
        &customizations,
        operation,
        desired.as_ref(),
        observed.as_ref(),
        &items,
        args.desired_replica,
    )
    .await
    {
        Ok(results) => {
            print!("{}", render(&results)?);
            Ok(0)
        }
        Err(error) => {
            eprintln!("Execute {} error: {error}", operation.name());
            Ok(1)
        }
    }
}

/// A document of a customization file: where it came from, and the customization or why it is
/// not one.
type Source = (String, Result<ResourceInterpreterCustomization, String>);

fn read(path: &Path) -> anyhow::Result<String> {
    if path == Path::new("-") {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .context("read standard input")?;
        return Ok(text);
    }
    std::fs::read_to_string(path).with_context(|| format!("read {}", path.display()))
}

/// The YAML (or JSON) documents of `text`, empty ones left out.
fn documents(text: &str, path: &Path) -> anyhow::Result<Vec<Value>> {
    let mut out = Vec::new();
    for document in yaml_serde::Deserializer::from_str(text) {
        let value = Value::deserialize(document)
            .with_context(|| format!("parse {} as YAML or JSON", path.display()))?;
        if !value.is_null() {
            out.push(value);
        }
    }
    Ok(out)
}

fn customizations(paths: &[PathBuf]) -> anyhow::Result<Vec<Source>> {
    let mut out = Vec::new();
    for path in paths {
        for document in documents(&read(path)?, path)? {
            let name = document
                .pointer("/metadata/name")
                .and_then(Value::as_str)
                .map_or_else(|| path.display().to_string(), str::to_owned);
            let kind = document["kind"].as_str().unwrap_or_default();
            let parsed = if kind != "ResourceInterpreterCustomization" {
                Err(format!(
                    "{name}: not a ResourceInterpreterCustomization (kind {kind:?})"
                ))
            } else {
                serde_json::from_value(document).map_err(|error| format!("{name}: {error}"))
            };
            out.push((name, parsed));
        }
    }
    Ok(out)
}

/// karmadactl's check report, and whether anything failed.
fn check(sources: &[Source]) -> (String, bool) {
    let mut out = String::new();
    let mut failed = false;
    for (name, parsed) in sources {
        out.push_str("-----------------------------------\n");
        out.push_str(&format!("SOURCE: {name}\n"));
        let customization = match parsed {
            Ok(customization) => customization,
            Err(error) => {
                failed = true;
                out.push_str(&format!("{error}\n"));
                continue;
            }
        };
        let target = &customization.spec.target;
        if target.kind.is_empty() {
            failed = true;
            out.push_str("target.kind no set\n");
            continue;
        }
        if target.api_version.is_empty() {
            failed = true;
            out.push_str("target.apiVersion no set\n");
            continue;
        }
        out.push_str(&format!("TARGET: {} {}\n", target.api_version, target.kind));
        out.push_str("RULERS:\n");
        for operation in Operation::ALL {
            let verdict = match customization.spec.customizations.script(operation) {
                None | Some("") => "UNSET".to_owned(),
                Some(script) => match flotilla_api::karmada::lua::check_script(script) {
                    Ok(()) => "PASS".to_owned(),
                    Err(error) => {
                        failed = true;
                        format!("ERROR: {}", error.trim())
                    }
                },
            };
            out.push_str(&format!("    {}:\t{verdict}\n", operation.name()));
        }
    }
    (out, failed)
}

/// The operation named `name`, ignoring case.
fn operation(name: &str) -> anyhow::Result<Operation> {
    Operation::ALL
        .into_iter()
        .find(|o| o.name().eq_ignore_ascii_case(name))
        .ok_or_else(|| {
            let names: Vec<&str> = Operation::ALL.iter().map(|o| o.name()).collect();
            anyhow::anyhow!(
                "operation {name} is not supported. Use one of: {}",
                names.join(", ")
            )
        })
}

fn object(path: &Path) -> anyhow::Result<Value> {
    let mut documents = documents(&read(path)?, path)?;
    match documents.len() {
        1 => Ok(documents.remove(0)),
        0 => bail!("{} holds no object", path.display()),
        n => bail!("{} holds {n} objects; give one", path.display()),
    }
}

fn status_items(path: &Path) -> anyhow::Result<Vec<AggregatedStatusItem>> {
    let mut items = Vec::new();
    for document in documents(&read(path)?, path)? {
        let list = match document {
            Value::Array(list) => list,
            one => vec![one],
        };
        for item in list {
            let status = item.get("status").filter(|s| !s.is_null());
            items.push(AggregatedStatusItem {
                cluster_name: text(&item, "clusterName"),
                status: status.map(JsonText::new),
                applied: item["applied"].as_bool().unwrap_or(false),
                applied_message: text(&item, "appliedMessage"),
                health: text(&item, "health"),
            });
        }
    }
    Ok(items)
}

fn text(item: &Value, field: &str) -> String {
    item[field].as_str().unwrap_or_default().to_owned()
}

/// The object most operations take: the desired one or the observed one, not both.
fn one_object<'a>(
    desired: Option<&'a Value>,
    observed: Option<&'a Value>,
) -> Result<&'a Value, String> {
    match (desired, observed) {
        (None, None) => Err("desired-file, observed-file options are not set".into()),
        (Some(_), Some(_)) => {
            Err("you can not specify both desired-file and observed-file options".into())
        }
        (Some(object), None) | (None, Some(object)) => Ok(object),
    }
}

/// Runs `operation`: its named results in karmadactl's order, or the error to report.
async fn execute(
    customizations: &Customizations,
    operation: Operation,
    desired: Option<&Value>,
    observed: Option<&Value>,
    items: &[AggregatedStatusItem],
    replicas: i32,
) -> Result<Vec<(&'static str, Value)>, String> {
    let not_enabled = || "rule is not enabled".to_owned();
    let failed = |error: flotilla_controllers::interpreter::CustomizedError| error.to_string();
    Ok(match operation {
        Operation::Retain => {
            let desired = desired.ok_or("desired, desired-file options are not set")?;
            let observed = observed.ok_or("observed, observed-file options are not set")?;
            let retained = customizations
                .retain(desired, observed)
                .await
                .ok_or_else(not_enabled)?
                .map_err(failed)?;
            vec![("retained", retained)]
        }
        Operation::InterpretReplica => {
            let object = one_object(desired, observed)?;
            let interpreted = customizations
                .interpret_replica(object)
                .await
                .ok_or_else(not_enabled)?
                .map_err(failed)?;
            vec![
                ("replica", interpreted.replicas.into()),
                ("requires", to_json(&interpreted.requirements)),
            ]
        }
        Operation::InterpretComponent => {
            let object = one_object(desired, observed)?;
            let components = customizations
                .interpret_components(object)
                .await
                .ok_or_else(not_enabled)?
                .map_err(failed)?;
            vec![("components", to_json(&components))]
        }
        Operation::ReviseReplica => {
            let object = one_object(desired, observed)?;
            let revised = customizations
                .revise_replica(object, replicas)
                .ok_or_else(not_enabled)?
                .map_err(failed)?;
            vec![("revised", revised)]
        }
        Operation::InterpretStatus => {
            let object = one_object(desired, observed)?;
            let status = customizations
                .reflect_status(object)
                .await
                .ok_or_else(not_enabled)?
                .map_err(failed)?;
            vec![("status", status)]
        }
        Operation::AggregateStatus => {
            let object = one_object(desired, observed)?;
            let status = customizations
                .aggregate_status(object, items)
                .await
                .ok_or_else(not_enabled)?
                .map_err(failed)?;
            let mut aggregated = object.clone();
            if let Some(fields) = aggregated.as_object_mut() {
                fields.insert("status".into(), status);
            }
            vec![("aggregatedStatus", aggregated)]
        }
        Operation::InterpretHealth => {
            let object = one_object(desired, observed)?;
            let healthy = customizations
                .interpret_health(object)
                .await
                .ok_or_else(not_enabled)?
                .map_err(failed)?;
            vec![("healthy", healthy.into())]
        }
        Operation::InterpretDependency => {
            let object = one_object(desired, observed)?;
            let dependencies = customizations
                .dependencies(object)
                .await
                .ok_or_else(not_enabled)?
                .map_err(failed)?;
            vec![("dependencies", to_json(&dependencies))]
        }
    })
}

/// karmadactl's output: one YAML document per result, headed `# [i/n] name:`.
fn render(results: &[(&str, Value)]) -> anyhow::Result<String> {
    let mut out = String::new();
    for (i, (name, value)) in results.iter().enumerate() {
        out.push_str("---\n");
        out.push_str(&format!("# [{}/{}] {name}:\n", i + 1, results.len()));
        let yaml = yaml_serde::to_string(value).context("print the result as YAML")?;
        out.push_str(&yaml);
        if !yaml.ends_with('\n') {
            out.push('\n');
        }
    }
    Ok(out)
}

fn to_json<T: serde::Serialize>(value: &T) -> Value {
    serde_json::to_value(value).unwrap_or(Value::Null)
}

#[cfg(test)]
mod tests;
