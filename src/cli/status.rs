//! `kubectl fleet status [SITE…]`: per-site table and fleet-wide footer
//! (docs/architecture.md#the-life-of-a-site), `-o wide|json|yaml`, filters, and `--watch` that redraws
//! on the changes reported by the watch API, at most once a second.
//!
//! Every form also reads the hub leader's liveness record (one GET of the
//! FederationStatus, decoded only as far as `status.hub`, made while the
//! first page of sites is listed; re-read every [`HUB_POLL`] by `--watch`)
//! and says when no hub is judging the fleet: one line on stderr under a
//! table ([`render::status::hub_warning`]; under the table itself on a
//! `--watch` screen), `summary.hub` in JSON/YAML (docs/operations.md#is-a-hub-judging).

use std::io::Write as _;

use futures::{FutureExt as _, StreamExt as _};

use super::{ColorChoice, Error, GlobalArgs, Io, wire_enum};
use crate::api::{Environment, FEDERATION_STATUS_NAME, FederatedCluster, HubLiveness, Phase, Tier};
pub use crate::fleet::filter::SiteFilter;
use crate::fleet::liveness::{HubVerdict, hub_verdict};
use crate::fleet::policy::Incidents;
use crate::k8s::federation_status::get_federation_status;
use crate::render;

/// The hub's liveness record as a view read it — the record (None: there
/// is none), or why it could not be read — and the API server's clock, as
/// the answer dated it: every age a view judges is judged at
/// [`HubRecord::now`], so a reader whose own clock is off still sees the
/// hub as the hub sees itself (docs/operations.md#is-a-hub-judging).
pub(super) struct HubRecord {
    read: Result<Option<HubLiveness>, String>,
    clock: crate::k8s::ServerClock,
}

impl HubRecord {
    /// The time now on the API server's clock (the reader's own when the
    /// answer was not dated).
    pub(super) fn now(&self) -> jiff::Timestamp {
        self.clock.now()
    }

    /// A record read with the rest of the FederationStatus, in an answer
    /// dated by `clock`.
    pub(super) fn read_with(record: Option<HubLiveness>, clock: crate::k8s::ServerClock) -> Self {
        HubRecord {
            read: Ok(record),
            clock,
        }
    }

    /// Why the record could not be read, if it could not.
    fn error(&self) -> Option<&str> {
        self.read.as_ref().err().map(String::as_str)
    }
}

/// Reads the hub's liveness record; a failure is kept as its message,
/// since a view still shows the sites without it.
pub(super) async fn read_hub_record(hub: &crate::k8s::Cluster) -> HubRecord {
    let read = hub.hub_liveness().await;
    let clock = read.clock;
    if !clock.offset().is_zero() {
        tracing::info!(
            offset_seconds = clock.offset().as_secs(),
            "this machine's clock differs from the API server's: ages are judged on the server's"
        );
    }
    HubRecord {
        read: read.record.map_err(|e| e.to_string()),
        clock,
    }
}

/// The fleet's incidents, which the hub decides signals with
/// (`fleet::policy::Incidents`): views that show a signal's remediation
/// show the hub's decision. On a failure the signals are decided alone
/// and [`incidents_or_warn`] says so.
pub(super) async fn read_incidents(hub: &crate::k8s::Cluster) -> Result<Incidents, String> {
    hub.fleet_incidents().await.map_err(|e| e.to_string())
}

/// The incidents read, or none with a warning on `err` naming why.
pub(super) fn incidents_or_warn(
    read: Result<Incidents, String>,
    err: &mut dyn std::io::Write,
) -> std::io::Result<Incidents> {
    match read {
        Ok(incidents) => Ok(incidents),
        Err(why) => {
            writeln!(
                err,
                "warning: could not read the hub's incidents ({}): each signal's remediation is shown as its own tier and severity decide it, without the correlations and cascades that may raise it",
                render::safe::terminal_safe(&why)
            )?;
            Ok(Incidents::default())
        }
    }
}

/// The verdict on `record` at `now`.
pub(super) fn verdict_of(record: &HubRecord, now: jiff::Timestamp) -> HubVerdict {
    match &record.read {
        Ok(record) => hub_verdict(record.as_ref(), now),
        Err(_) => HubVerdict::unknown(),
    }
}

/// Writes the hub warning line to `err` when there is one for a fleet of
/// `sites` sites. Human formats only: JSON and YAML carry the verdict as a
/// field (`summary.hub`), and a script that merges stderr into them must
/// still get a document.
pub(super) fn warn_about_hub(
    err: &mut dyn std::io::Write,
    record: &HubRecord,
    sites: usize,
    now: jiff::Timestamp,
) -> std::io::Result<()> {
    let cause = record.error();
    match render::status::hub_warning(&verdict_of(record, now), sites, cause) {
        Some(line) => writeln!(err, "{line}"),
        None => Ok(()),
    }
}

/// How often `--watch` re-reads the hub's liveness record: well within
/// the record's own threshold (3 intervals of 15 s), so a watch never
/// warns about a hub that is judging.
pub const HUB_POLL: std::time::Duration = std::time::Duration::from_secs(10);

/// Output formats of `status`: `-o table|wide|json|yaml|name|jsonpath=TEMPLATE`.
#[derive(Debug, Clone, PartialEq)]
pub enum StatusOutput {
    /// One row per site and a fleet footer
    Table,
    /// The table plus region, versions, token expiry, GPUs by vendor, maintenance time left and why a site is not Connected
    Wide,
    /// The documented JSON report (sites and summary)
    Json,
    /// The same report as YAML
    Yaml,
    /// `federatedcluster.federation.kubectl-fleet.dev/SITE` per line, like `kubectl get -o name`
    Name,
    /// kubectl's JSONPath template over the JSON report (docs/views.md#-o-name-and--o-jsonpath)
    JsonPath(render::jsonpath::Template),
}

/// The top-level keys of the `-o json` report a JSONPath template runs over.
const REPORT_KEYS: [&str; 5] = ["apiVersion", "kind", "generatedAt", "sites", "summary"];

/// The `-o` words, for help, completion and the error naming them.
pub const STATUS_OUTPUTS: [&str; 6] = ["table", "wide", "json", "yaml", "name", "jsonpath="];

impl StatusOutput {
    /// A table for people (as opposed to a document for scripts).
    pub fn is_human(&self) -> bool {
        matches!(self, StatusOutput::Table | StatusOutput::Wide)
    }

    /// Whether it shows each signal with the hub's decision on it (the
    /// report does; the table counts signals, `-o name` has none), so the
    /// fleet's incidents must be read.
    fn decides_signals(&self) -> bool {
        matches!(
            self,
            StatusOutput::Json | StatusOutput::Yaml | StatusOutput::JsonPath(_)
        )
    }

    /// The fleet's incidents when this output needs them ([`read_incidents`]).
    async fn incidents(&self, hub: &crate::k8s::Cluster) -> Result<Incidents, String> {
        if self.decides_signals() {
            read_incidents(hub).await
        } else {
            Ok(Incidents::default())
        }
    }

    /// Parses `-o`: one of [`STATUS_OUTPUTS`] in any case, or `jsonpath=`
    /// with a template (`jsonpath='{.sites[*].name}'`, the value kubectl
    /// takes; the template keeps its case). A word that is none of them is
    /// [`OutputError::Unknown`].
    pub fn parse(s: &str) -> Result<Self, OutputError> {
        let (word, template) = match s.split_once(['=', ':']) {
            Some((w, t)) if w.eq_ignore_ascii_case("jsonpath") => (w, Some(t)),
            _ => (s, None),
        };
        if let Some(t) = template {
            if t.is_empty() {
                return Err(OutputError::Invalid(
                    "jsonpath= needs a template, e.g. -o jsonpath='{.sites[*].name}'".into(),
                ));
            }
            let template = render::jsonpath::Template::parse(t).map_err(|e| {
                OutputError::Invalid(format!(
                    "{e}; the template runs over the `-o json` report, e.g. '{{.sites[*].name}}'"
                ))
            })?;
            // A key the report does not have prints nothing: most likely a
            // template written for `kubectl get` (`.items`).
            if let Some(key) = template
                .top_level_keys()
                .into_iter()
                .find(|k| !REPORT_KEYS.contains(k))
            {
                return Err(OutputError::Invalid(format!(
                    "the template reads .{key}, which the `-o json` report does not have: it has {}, e.g. '{{.sites[*].name}}' where kubectl get has '{{.items[*].metadata.name}}'",
                    REPORT_KEYS.join(", ")
                )));
            }
            return Ok(StatusOutput::JsonPath(template));
        }
        match word.to_ascii_lowercase().as_str() {
            "table" => Ok(StatusOutput::Table),
            "wide" => Ok(StatusOutput::Wide),
            "json" => Ok(StatusOutput::Json),
            "yaml" => Ok(StatusOutput::Yaml),
            "name" => Ok(StatusOutput::Name),
            "jsonpath" => Err(OutputError::Invalid(
                "jsonpath needs a template: -o jsonpath='{.sites[*].name}'".into(),
            )),
            _ => Err(OutputError::Unknown {
                // `jsonpth={…}`: the template was fine, the word was a slip.
                meant: s.split_once('=').and_then(|(w, t)| {
                    crate::fleet::suggest::closest(w, ["jsonpath"]).map(|j| format!("{j}={t}"))
                }),
            }),
        }
    }
}

/// Why `-o` was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OutputError {
    /// Not one of the formats: the accepted ones are listed (and the one
    /// meant, by the shared did-you-mean of usage errors).
    Unknown {
        /// A `jsonpath=` value meant by a slip of its word, if it was one.
        meant: Option<String>,
    },
    /// One of the formats, used wrongly: why.
    Invalid(String),
}

/// The `-o` values as a usage error lists them.
const STATUS_OUTPUTS_SHOWN: [&str; 6] =
    ["table", "wide", "json", "yaml", "name", "jsonpath=TEMPLATE"];

/// `-o`'s clap parser: [`StatusOutput::parse`], offering [`STATUS_OUTPUTS`]
/// to help and completion.
#[derive(Clone, Copy, Debug)]
pub struct StatusOutputParser;

impl clap::builder::TypedValueParser for StatusOutputParser {
    type Value = StatusOutput;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<Self::Value, clap::Error> {
        let text = value.to_str().ok_or_else(|| {
            clap::Error::raw(clap::error::ErrorKind::InvalidUtf8, "-o is not UTF-8\n").with_cmd(cmd)
        })?;
        let name = arg.map_or_else(|| "--output".to_owned(), ToString::to_string);
        StatusOutput::parse(text).map_err(|e| match e {
            // The same error clap makes for an enum flag, so the usage
            // line lists the formats and names the one meant.
            OutputError::Unknown { meant } => {
                use clap::error::{ContextKind, ContextValue};
                let mut err = clap::Error::new(clap::error::ErrorKind::InvalidValue).with_cmd(cmd);
                err.insert(ContextKind::InvalidArg, ContextValue::String(name));
                err.insert(
                    ContextKind::InvalidValue,
                    ContextValue::String(text.to_owned()),
                );
                err.insert(
                    ContextKind::ValidValue,
                    ContextValue::Strings(STATUS_OUTPUTS_SHOWN.map(str::to_owned).to_vec()),
                );
                if let Some(meant) = meant {
                    err.insert(ContextKind::SuggestedValue, ContextValue::String(meant));
                }
                err
            }
            OutputError::Invalid(why) => clap::Error::raw(
                clap::error::ErrorKind::ValueValidation,
                format!("invalid value '{text}' for '{name}': {why}\n"),
            )
            .with_cmd(cmd),
        })
    }

    fn possible_values(
        &self,
    ) -> Option<Box<dyn Iterator<Item = clap::builder::PossibleValue> + '_>> {
        Some(Box::new(
            STATUS_OUTPUTS
                .into_iter()
                .map(clap::builder::PossibleValue::new),
        ))
    }
}

/// Arguments of `kubectl fleet status` (`--version` filters by edge
/// version here: `kubectl fleet version` prints the plugin's).
#[derive(Debug, clap::Args)]
#[command(disable_version_flag = true)]
pub struct StatusArgs {
    /// Only these sites (default: all)
    #[arg(value_name = "SITE")]
    pub sites: Vec<String>,
    /// Output format
    #[arg(short, long, value_name = "FORMAT", default_value = "table", value_parser = StatusOutputParser)]
    pub output: StatusOutput,
    /// Label selector, as kubectl (e.g. -l team=ml,region!=eu)
    #[arg(short = 'l', long, value_name = "SELECTOR")]
    pub selector: Option<String>,
    /// Only sites of this tier
    #[arg(long, value_name = "TIER", value_parser = wire_enum::<Tier>())]
    pub tier: Option<Tier>,
    /// Only sites of this environment
    #[arg(long, value_name = "ENV", value_parser = wire_enum::<Environment>())]
    pub environment: Option<Environment>,
    /// Only sites in this region
    #[arg(long, value_name = "REGION")]
    pub region: Option<String>,
    /// Only sites in this phase
    #[arg(long, value_name = "PHASE", value_parser = wire_enum::<Phase>())]
    pub phase: Option<Phase>,
    /// Only sites whose edge reports this version (as the footer's Edges: line names it; a leading v is ignored)
    #[arg(long, value_name = "VERSION", value_parser = parse_version)]
    pub version: Option<String>,
    /// Only the sites of this incident (xc-, cc- or go- id, as `kubectl fleet incidents` lists them)
    #[arg(long, value_name = "ID", value_parser = crate::fleet::incident::parse_incident_id)]
    pub incident: Option<String>,
    /// Keep running and redraw when sites change (at most once a second)
    #[arg(short, long)]
    pub watch: bool,
    /// Colour the phase column
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,
}

/// Validates `--version`: a version as edges report it (printable, at
/// most 64 characters), so a typo stops before anything is listed.
fn parse_version(s: &str) -> Result<String, String> {
    if s.is_empty() || s.chars().count() > 64 {
        return Err("must be 1 to 64 characters, e.g. 0.2.0".into());
    }
    if s.chars().any(|c| c.is_control() || c.is_whitespace()) {
        return Err("must not contain spaces or control characters, e.g. 0.2.0".into());
    }
    Ok(s.to_owned())
}

/// The hub's FederationStatus status with every incident whole: when the
/// singleton cut a list, the sites complete it — `listed` when it is the
/// whole fleet, else a fresh list of every site. Also says, on `err`,
/// when a list could not be completed (a hub that did not record how it
/// detects incidents) or when the hub follows fewer grouped outages than
/// there are. With the API server's clock, as the answer dated it.
pub(super) async fn whole_incidents(
    hub: &crate::k8s::Cluster,
    listed: Option<&[crate::api::FederatedCluster]>,
    err: &mut dyn std::io::Write,
) -> Result<
    (
        Option<crate::api::FederationStatusStatus>,
        crate::k8s::ServerClock,
    ),
    Error,
> {
    use crate::fleet::incident::{complete, is_cut};
    let (read, clock) = hub.get_federation_status_dated().await;
    let Some(mut fleet) = read?.and_then(|f| f.status) else {
        return Ok((None, clock));
    };
    if is_cut(&fleet) {
        let whole = match listed {
            Some(sites) => complete(&mut fleet, sites),
            None => complete(&mut fleet, &hub.list_sites(None).await?),
        };
        if !whole {
            writeln!(
                err,
                "note: the hub's FederationStatus names only some sites of its largest incidents and \
                 did not record how it detects them; the counts are whole, and the hub's REST API \
                 lists every site (/api/v1/federation/incidents/ID)"
            )?;
        }
    }
    let more = fleet.outage_count() - i64::try_from(fleet.outages.len()).unwrap_or(i64::MAX);
    if more > 0 {
        writeln!(
            err,
            "note: {more} more grouped outages are not listed: the hub follows the {} largest",
            fleet.outages.len()
        )?;
    }
    Ok((Some(fleet), clock))
}

/// The sites of incident `id` as the hub's FederationStatus lists it,
/// completed from the sites when it cut the list (the same sites `kubectl
/// fleet incidents ID` shows), or an error naming the id when the hub does
/// not report it.
pub(super) async fn incident_sites(
    hub: &crate::k8s::Cluster,
    id: &str,
    err: &mut dyn std::io::Write,
) -> Result<std::collections::BTreeSet<String>, Error> {
    use crate::fleet::incident::find_incident;
    // Listed whole: no need to read every site for it.
    let fleet = hub
        .found(
            format!("get FederationStatus {FEDERATION_STATUS_NAME}"),
            get_federation_status(&hub.federation_statuses()),
        )
        .await?
        .flatten()
        .and_then(|f| f.status);
    if let Some(incident) = fleet.as_ref().and_then(|f| find_incident(f, id))
        && !incident.is_cut()
    {
        return Ok(incident.sites());
    }
    let (fleet, _) = whole_incidents(hub, None, err).await?;
    fleet
        .as_ref()
        .and_then(|f| crate::fleet::incident::find_incident(f, id))
        .map(|i| i.sites())
        .ok_or_else(|| unknown_incident(id, hub.server()))
}

/// The error of an incident id the hub does not report (any more).
pub(super) fn unknown_incident(id: &str, server: &str) -> Error {
    Error::Invalid {
        what: format!("incident {id} not found on {server}"),
        hint: "`kubectl fleet incidents` lists the active correlations, cascades and grouped outages (an incident ends when its signals clear)".to_owned(),
    }
}

/// Runs `kubectl fleet status`.
pub async fn run(global: &GlobalArgs, args: StatusArgs, io: &mut Io<'_>) -> Result<(), Error> {
    let hub = global.hub().await?;
    let within = match &args.incident {
        Some(id) => Some(incident_sites(&hub, id, io.err).await?),
        None => None,
    };
    let filter = SiteFilter {
        names: args.sites.clone(),
        tier: args.tier,
        environment: args.environment,
        region: args.region.clone(),
        phase: args.phase,
        version: args.version.clone(),
        within,
    };
    let color = args.color.enabled(io.stdout_tty);
    let selector = args.selector.as_deref();
    if !args.watch {
        if args.sites.is_empty() {
            return render_paged(&hub, selector, &filter, &args.output, color, io).await;
        }
        let (listed, record, incidents) = tokio::join!(
            hub.list_sites(selector),
            read_hub_record(&hub),
            args.output.incidents(&hub)
        );
        let listed = listed?;
        let incidents = incidents_or_warn(incidents, io.err)?;
        let now = record.now();
        // Like `kubectl get fc NAME`: what exists is shown, a name that
        // does not is an error.
        let missing: Vec<&String> = args
            .sites
            .iter()
            .filter(|n| !listed.iter().any(|s| s.site_name() == n.as_str()))
            .collect();
        let fleet_size = listed.len();
        let verdict = verdict_of(&record, now);
        let sites = filter.apply(listed, verdict.judging(), now);
        if missing.is_empty() || !sites.is_empty() {
            let mut frame = Frame::begin(&args.output, verdict, &incidents, now, io.stdout_tty)?;
            for site in sites {
                frame.push(std::borrow::Cow::Owned(site))?;
            }
            frame.finish(color, &mut io.out, Some(&mut *io.err))?;
        }
        if !missing.is_empty() {
            let names: Vec<String> = missing.iter().map(|n| format!("{n:?}")).collect();
            return Err(Error::Invalid {
                what: format!("site {} not found", names.join(", ")),
                hint: "`kubectl fleet status` lists the registered sites".to_owned(),
            });
        }
        if args.output.is_human() {
            warn_about_hub(io.err, &record, fleet_size, now)?;
        }
        return Ok(());
    }
    watch(&hub, selector, &filter, &args.output, color, io).await
}

/// At most this many frames per second are drawn by `--watch`: a large
/// fleet heartbeats many times a second, and each frame renders every site.
const FRAME_EVERY: std::time::Duration = std::time::Duration::from_secs(1);

/// What `--watch` woke up for.
enum Wake {
    /// A change from the watch API (None: the watch ended).
    Change(Option<Result<crate::k8s::SiteChange, crate::k8s::Error>>),
    /// The pending frame is due.
    Frame,
    /// Time to re-read the hub's liveness record.
    Poll,
}

/// What a stream of frames must show again when it changes without any
/// site event: whether a hub judges, and how many sites are shown with a
/// phase no hub judged, per phase (both move with time alone).
fn unjudged_signature(
    fleet: &std::collections::BTreeMap<String, FederatedCluster>,
    filter: &SiteFilter,
    verdict: &HubVerdict,
    now: jiff::Timestamp,
) -> (crate::fleet::liveness::HubState, [usize; 4]) {
    let mut counts = [0usize; 4];
    for site in fleet
        .values()
        .filter(|s| filter.matches(s, verdict.judging(), now))
    {
        let shown = crate::fleet::summary::shown_phase(site, verdict.judging(), now);
        if !shown.judged_by_hub {
            let i = Phase::ALL
                .iter()
                .position(|p| *p == shown.phase)
                .unwrap_or(0);
            counts[i] += 1;
        }
    }
    (verdict.state, counts)
}

/// The terminal's alternate screen: entered by `--watch` on a terminal
/// (like `watch` and `top`), left on exit so the shell's screen comes back.
const ENTER_ALTERNATE_SCREEN: &str = "\x1b[?1049h";
/// Leaves the alternate screen (and shows the cursor).
const LEAVE_ALTERNATE_SCREEN: &str = "\x1b[?1049l";

/// `--watch`: on a terminal a table is drawn on the alternate screen, left
/// again however the watch ends (Ctrl-C, the watch ending, an error);
/// elsewhere frames follow each other on stdout ([`watch_frames`]).
async fn watch(
    hub: &crate::k8s::Cluster,
    selector: Option<&str>,
    filter: &SiteFilter,
    output: &StatusOutput,
    color: bool,
    io: &mut Io<'_>,
) -> Result<(), Error> {
    if !(io.stdout_tty && output.is_human()) {
        return watch_frames(hub, selector, filter, output, color, io).await;
    }
    write!(io.out, "{ENTER_ALTERNATE_SCREEN}")?;
    io.out.flush()?;
    let result = tokio::select! {
        r = watch_frames(hub, selector, filter, output, color, io) => r,
        // Ctrl-C ends the watch like its end: the screen is restored.
        _ = tokio::signal::ctrl_c() => Ok(()),
    };
    write!(io.out, "{LEAVE_ALTERNATE_SCREEN}")?;
    io.out.flush()?;
    result
}

/// `--watch`: one copy of the fleet, updated by each change the watch API
/// reports. A frame is drawn once every change that is ready has been
/// taken in, at most once per [`FRAME_EVERY`] (a change that comes sooner
/// is drawn at the next frame), and only when it differs from the last.
/// A table on a terminal is also redrawn every [`FRAME_EVERY`] without a
/// change, like `watch`, so its ages move on (still only when the text
/// changed), with the hub warning under it; a stream of tables or reports
/// gets a frame per change, and one when the hub's verdict or the sites
/// shown with a phase no hub judged change with time alone (checked every
/// [`HUB_POLL`]), a stream of tables the warning on stderr when it changes.
async fn watch_frames(
    hub: &crate::k8s::Cluster,
    selector: Option<&str>,
    filter: &SiteFilter,
    output: &StatusOutput,
    color: bool,
    io: &mut Io<'_>,
) -> Result<(), Error> {
    use crate::k8s::SiteChange;
    use std::collections::BTreeMap;

    let mut changes = Box::pin(hub.site_changes(selector));
    let mut renewals = hub.site_renewals().await.unwrap_or_default();
    let mut fleet: BTreeMap<String, FederatedCluster> = BTreeMap::new();
    let mut listed = false;
    let mut pending = false;
    let mut next_frame = tokio::time::Instant::now();
    let mut last: Option<Vec<u8>> = None;
    let screen = io.stdout_tty && matches!(output, StatusOutput::Table | StatusOutput::Wide);
    let mut record = read_hub_record(hub).await;
    let mut incidents = incidents_or_warn(output.incidents(hub).await, io.err)?;
    let mut next_poll = tokio::time::Instant::now() + HUB_POLL;
    // What the last frame showed of the hub and unjudged phases, and the
    // warning last written to stderr.
    let mut drawn = None;
    let mut warned: Option<crate::fleet::liveness::HubState> = None;
    loop {
        let wake = if pending {
            tokio::select! {
                change = changes.next() => Wake::Change(change),
                () = tokio::time::sleep_until(next_frame) => Wake::Frame,
                () = tokio::time::sleep_until(next_poll) => Wake::Poll,
            }
        } else {
            tokio::select! {
                change = changes.next() => Wake::Change(change),
                () = tokio::time::sleep_until(next_poll) => Wake::Poll,
            }
        };
        match wake {
            Wake::Change(None) => return Ok(()),
            Wake::Change(Some(first)) => {
                let mut change = Some(first);
                // Take in whatever else is ready before drawing.
                while let Some(c) = change.take() {
                    match c? {
                        SiteChange::Listed(sites) => {
                            fleet = sites
                                .into_iter()
                                .map(|mut s| {
                                    s.with_lease_among(&renewals);
                                    (s.site_name().to_owned(), s)
                                })
                                .collect();
                            listed = true;
                        }
                        SiteChange::Applied(mut site) => {
                            site.with_lease_among(&renewals);
                            fleet.insert(site.site_name().to_owned(), *site);
                        }
                        SiteChange::Deleted(name) => {
                            fleet.remove(&name);
                        }
                    }
                    pending = listed;
                    change = changes.next().now_or_never().flatten();
                }
            }
            Wake::Frame => {}
            Wake::Poll => {
                record = read_hub_record(hub).await;
                // Heartbeats renew leases, which are read again here rather
                // than watched: a fleet's renewals are most of its events,
                // and a heartbeat's age is all they change
                // (docs/scaling.md#liveness-apart-from-status).
                if let Ok(read) = hub.site_renewals().await {
                    renewals = read;
                    for site in fleet.values_mut() {
                        site.with_lease_among(&renewals);
                    }
                    pending = listed;
                }
                // A change of the incidents changes the decisions a
                // report shows (a failed read keeps the last ones).
                if let Ok(read) = output.incidents(hub).await
                    && read != incidents
                {
                    incidents = read;
                    pending = listed;
                }
                next_poll = tokio::time::Instant::now() + HUB_POLL;
                let now = record.now();
                let signature = unjudged_signature(&fleet, filter, &verdict_of(&record, now), now);
                if drawn.as_ref() != Some(&signature) {
                    pending = listed;
                }
            }
        }
        if !pending || tokio::time::Instant::now() < next_frame {
            continue;
        }
        // On a screen the next frame is always due (ages move on).
        pending = screen;
        next_frame = tokio::time::Instant::now() + FRAME_EVERY;
        let now = record.now();
        let verdict = verdict_of(&record, now);
        drawn = Some(unjudged_signature(&fleet, filter, &verdict, now));
        let mut frame = Frame::begin(output, verdict.clone(), &incidents, now, io.stdout_tty)?;
        for site in fleet
            .values()
            .filter(|s| filter.matches(s, verdict.judging(), now))
        {
            frame.push(std::borrow::Cow::Borrowed(site))?;
        }
        let mut text = Vec::new();
        frame.finish(color, &mut text, None)?;
        let cause = record.error();
        let warning =
            render::status::hub_warning(&verdict, fleet.len(), cause).filter(|_| output.is_human());
        if screen && let Some(line) = &warning {
            writeln!(text, "\n{line}")?;
        }
        // Ages move on their own; redraw only when the rendered view changed.
        if last.as_deref() != Some(text.as_slice()) {
            if screen {
                // Clear the screen and home the cursor, like `watch`.
                write!(io.out, "\x1b[2J\x1b[H")?;
            } else if last.is_some() && *output == StatusOutput::Yaml {
                writeln!(io.out, "---")?;
            }
            io.out.write_all(&text)?;
            io.out.flush()?;
            last = Some(text);
        }
        // A stream gets the warning once each time the verdict changes
        // (its figures move every second).
        let state = warning.as_ref().map(|_| verdict.state);
        if !screen && state != warned {
            if let Some(line) = &warning {
                writeln!(io.err, "{line}")?;
            }
            warned = state;
        }
    }
}

/// One rendering of the status, folded site by site: the table keeps its
/// compact rows and totals, the JSON/YAML report and `-o name` are written
/// as they go (see [`Frame::drain`]) and keep only their totals, a
/// JSONPath template keeps the text it printed (and the sites, only for a
/// template that needs the whole list at once: docs/views.md#-o-name-and--o-jsonpath).
enum Frame {
    Table(render::status::StatusTable),
    Report(render::report::ReportStream, Vec<u8>),
    Names(Vec<u8>),
    JsonPath(Box<render::report::JsonPathReport>),
}

impl Frame {
    /// `escape`: string values a JSONPath template prints are made
    /// terminal-safe (stdout is a terminal).
    fn begin(
        output: &StatusOutput,
        hub: HubVerdict,
        incidents: &Incidents,
        now: jiff::Timestamp,
        escape: bool,
    ) -> Result<Self, Error> {
        use render::report::{ReportFormat, ReportStream};
        let format = match output {
            StatusOutput::Table | StatusOutput::Wide => {
                return Ok(Frame::Table(render::status::StatusTable::new(
                    now,
                    hub.judging(),
                    *output == StatusOutput::Wide,
                )));
            }
            StatusOutput::Name => return Ok(Frame::Names(Vec::new())),
            StatusOutput::JsonPath(t) => {
                return Ok(Frame::JsonPath(Box::new(
                    render::report::JsonPathReport::begin(
                        t.clone(),
                        hub,
                        incidents.clone(),
                        now,
                        escape,
                    ),
                )));
            }
            StatusOutput::Json => ReportFormat::Json,
            StatusOutput::Yaml => ReportFormat::Yaml,
        };
        let mut buf = Vec::with_capacity(1 << 16);
        let report = ReportStream::begin(format, hub, incidents.clone(), now, &mut buf)?;
        Ok(Frame::Report(report, buf))
    }

    /// Adds one site; a report needs them in name order.
    fn push(&mut self, site: std::borrow::Cow<'_, FederatedCluster>) -> Result<(), Error> {
        match self {
            Frame::Table(table) => table.push(&site),
            Frame::Report(report, buf) => report.site(site.into_owned(), buf)?,
            Frame::Names(buf) => {
                buf.extend_from_slice(render::status::resource_name(site.site_name()).as_bytes());
                buf.push(b'\n');
            }
            Frame::JsonPath(report) => report.site(site.into_owned())?,
        }
        Ok(())
    }

    /// Writes out what is rendered so far (only a report and names have any).
    fn drain(&mut self, out: &mut impl std::io::Write) -> std::io::Result<()> {
        if let Frame::Report(_, buf) | Frame::Names(buf) = self {
            out.write_all(buf)?;
            buf.clear();
        }
        Ok(())
    }

    /// Writes out the rest: the whole table, or the end of the report.
    /// Given `empty_to`, an empty table's `No sites found` goes there
    /// instead (stderr, as kubectl's `No resources found`: stdout stays
    /// data); a watch's frame keeps it on screen.
    fn finish(
        self,
        color: bool,
        out: &mut impl std::io::Write,
        empty_to: Option<&mut dyn std::io::Write>,
    ) -> Result<(), Error> {
        match self {
            Frame::Table(table) if table.is_empty() && empty_to.is_some() => {
                if let Some(err) = empty_to {
                    for line in table.lines(color) {
                        err.write_all(line.as_bytes())?;
                    }
                }
            }
            Frame::Table(table) => {
                for line in table.lines(color) {
                    out.write_all(line.as_bytes())?;
                }
            }
            Frame::Report(report, mut buf) => {
                report.finish(&mut buf)?;
                out.write_all(&buf)?;
            }
            Frame::Names(buf) => out.write_all(&buf)?,
            Frame::JsonPath(report) => out.write_all(report.finish()?.as_bytes())?,
        }
        Ok(())
    }
}

/// One snapshot of the fleet, listed a page at a time and folded into the
/// output as it arrives: memory stays at one page plus the compact table
/// rows (`-o json|yaml` is written out page by page, keeping only totals),
/// however many sites there are. Same bytes as the whole-list report
/// ([`render::status_report`]) of the same sites.
///
/// The hub's liveness record is read alongside the first page: rows need
/// the verdict (a silent hub shows phases by age), so a page that arrives
/// before the record waits for it (in practice none: the record's GET goes
/// out first and is small).
async fn render_paged(
    hub: &crate::k8s::Cluster,
    selector: Option<&str>,
    filter: &SiteFilter,
    output: &StatusOutput,
    color: bool,
    io: &mut Io<'_>,
) -> Result<(), Error> {
    // The server's time, once the answer with the liveness record dated it.
    let mut now: Option<jiff::Timestamp> = None;
    let escape = io.stdout_tty;
    // The fleet's incidents are read alongside, for a report's decisions.
    let mut reading = {
        let hub = hub.clone();
        let output = output.clone();
        tokio::spawn(async move { tokio::join!(read_hub_record(&hub), output.incidents(&hub)) })
    };
    type Read = (HubRecord, Result<Incidents, String>);
    let joined = |r: Result<Read, tokio::task::JoinError>| {
        r.unwrap_or_else(|e| {
            let why = format!("reading the hub's liveness record: {e}");
            (
                HubRecord {
                    read: Err(why.clone()),
                    clock: crate::k8s::ServerClock::local(),
                },
                Err(why),
            )
        })
    };
    let mut record: Option<HubRecord> = None;
    let mut incidents: Option<Result<Incidents, String>> = None;
    let mut waiting: Vec<Vec<FederatedCluster>> = Vec::new();
    // The frame, once the verdict it is drawn with is known.
    let mut frame: Option<(Frame, Option<bool>)> = None;
    let mut fleet_size = 0usize;
    let mut out = std::io::BufWriter::with_capacity(1 << 16, &mut *io.out);
    hub.for_each_site_page(selector, |page| {
        fleet_size += page.len();
        if frame.is_none()
            && let Some(r) = (&mut reading).now_or_never()
        {
            let (r, read) = joined(r);
            let at = r.now();
            let verdict = verdict_of(&r, at);
            let judging = verdict.judging();
            let decided = read.clone().unwrap_or_default();
            frame = Some((
                Frame::begin(output, verdict, &decided, at, escape)?,
                judging,
            ));
            record = Some(r);
            incidents = Some(read);
            now = Some(at);
        }
        let (Some((frame, judging)), Some(now)) = (frame.as_mut(), now) else {
            waiting.push(page);
            return Ok(());
        };
        for page in waiting.drain(..).chain(std::iter::once(page)) {
            for site in page
                .into_iter()
                .filter(|s| filter.matches(s, *judging, now))
            {
                frame.push(std::borrow::Cow::Owned(site))?;
            }
        }
        frame.drain(&mut out)?;
        Ok::<_, Error>(())
    })
    .await?;
    let (record, incidents) = match (record, incidents) {
        (Some(r), Some(i)) => (r, i),
        _ => joined(reading.await),
    };
    let now = now.unwrap_or_else(|| record.now());
    let (mut frame, judging) = match frame {
        Some(f) => f,
        None => {
            let verdict = verdict_of(&record, now);
            let judging = verdict.judging();
            let decided = incidents.clone().unwrap_or_default();
            (
                Frame::begin(output, verdict, &decided, now, escape)?,
                judging,
            )
        }
    };
    for site in waiting
        .into_iter()
        .flatten()
        .filter(|s| filter.matches(s, judging, now))
    {
        frame.push(std::borrow::Cow::Owned(site))?;
    }
    frame.finish(color, &mut out, Some(&mut *io.err))?;
    out.flush()?;
    drop(out);
    if output.is_human() {
        warn_about_hub(io.err, &record, fleet_size, now)?;
    }
    incidents_or_warn(incidents, io.err)?;
    Ok(())
}
