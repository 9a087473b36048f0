//! `ipcperf list`: mechanisms, their modes and properties, and this system's limits.

use comfy_table::{presets::UTF8_FULL_CONDENSED, Table};
use ipcperf_core::machine::Machine;
use ipcperf_core::mechanism::MechanismKind;
use serde_json::json;

use clap::Args;

use crate::export::Format;
use crate::fail::Fail;

#[derive(Args, Debug)]
pub struct ListArgs {
    #[arg(long, short, value_enum, default_value_t = Format::Table)]
    pub format: Format,
}

pub fn run(a: ListArgs) -> Result<i32, Fail> {
    let m = Machine::collect();
    match a.format {
        Format::Json => {
            let v = json!({
                "mechanisms": MechanismKind::INFOS.iter().map(|i| json!({
                    "name": i.name,
                    "summary": i.summary,
                    "modes": i.modes.iter().map(|m| m.name()).collect::<Vec<_>>(),
                    "named_objects": i.names,
                })).collect::<Vec<_>>(),
                "limits": m.limits,
                "cpus": m.cpus,
            });
            crate::outln!("{}", serde_json::to_string_pretty(&v).expect("json"));
        }
        Format::Csv => {
            crate::outln!("name,modes,named_objects,summary");
            for i in MechanismKind::INFOS {
                let modes: Vec<_> = i.modes.iter().map(|m| m.name()).collect();
                crate::outln!(
                    "{},{},\"{}\",\"{}\"",
                    i.name,
                    modes.join(" "),
                    i.names,
                    i.summary
                );
            }
        }
        Format::Table | Format::Markdown => {
            let mut t = Table::new();
            t.load_style(UTF8_FULL_CONDENSED).set_header(vec![
                "mechanism",
                "modes",
                "named objects",
                "what it is",
            ]);
            for i in MechanismKind::INFOS {
                let modes: Vec<_> = i.modes.iter().map(|m| m.name()).collect();
                t.add_row(vec![i.name, &modes.join(", "), i.names, i.summary]);
            }
            crate::console::fit(&mut t);
            crate::outln!("{t}");
            let mut l = Table::new();
            l.load_style(UTF8_FULL_CONDENSED)
                .set_header(vec!["limit (sysctl)", "value here"]);
            for (k, v) in &m.limits {
                l.add_row(vec![k.as_str(), v.as_str()]);
            }
            crate::console::fit(&mut l);
            crate::outln!(
                "\nLimits on this system ({} CPUs, Linux {}):\n{l}",
                m.cpus,
                m.kernel
            );
        }
    }
    Ok(0)
}
