
using namespace System.Management.Automation
using namespace System.Management.Automation.Language

Register-ArgumentCompleter -Native -CommandName 'kubectl-fleet' -ScriptBlock {
    param($wordToComplete, $commandAst, $cursorPosition)

    $commandElements = $commandAst.CommandElements
    $command = @(
        'kubectl-fleet'
        for ($i = 1; $i -lt $commandElements.Count; $i++) {
            $element = $commandElements[$i]
            if ($element -isnot [StringConstantExpressionAst] -or
                $element.StringConstantType -ne [StringConstantType]::BareWord -or
                $element.Value.StartsWith('-') -or
                $element.Value -eq $wordToComplete) {
                break
        }
        $element.Value
    }) -join ';'

    $completions = @(switch ($command) {
        'kubectl-fleet' {
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use (default: the current context)')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'Give up on a request after this long, like kubectl (e.g. 10s, 1m); 0, the default, waits for a response without limit, but connecting still gives up after 30s')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log detail on stderr, as kubectl''s -v: 1-3 info and an error''s causes, 4-5 debug, 6+ trace')
            [CompletionResult]::new('--v', '--v', [CompletionResultType]::ParameterName, 'Log detail on stderr, as kubectl''s -v: 1-3 info and an error''s causes, 4-5 debug, 6+ trace')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('register', 'register', [CompletionResultType]::ParameterValue, 'Register a site on the hub and print the edge''s configuration')
            [CompletionResult]::new('rotate', 'rotate', [CompletionResultType]::ParameterValue, 'Mint a fresh token for a site (optionally revoking all older ones)')
            [CompletionResult]::new('unregister', 'unregister', [CompletionResultType]::ParameterValue, 'Remove everything `register` created for a site')
            [CompletionResult]::new('status', 'status', [CompletionResultType]::ParameterValue, 'Show per-site and fleet-wide status')
            [CompletionResult]::new('list', 'list', [CompletionResultType]::ParameterValue, 'Show per-site and fleet-wide status')
            [CompletionResult]::new('get', 'get', [CompletionResultType]::ParameterValue, 'Show per-site and fleet-wide status')
            [CompletionResult]::new('describe', 'describe', [CompletionResultType]::ParameterValue, 'Show one site in full: conditions with reasons, inventory, signals and policy')
            [CompletionResult]::new('policy', 'policy', [CompletionResultType]::ParameterValue, 'Show the remediation policy per tier and severity')
            [CompletionResult]::new('incidents', 'incidents', [CompletionResultType]::ParameterValue, 'Show active correlations, cascades and grouped outages, or one incident by its ID')
            [CompletionResult]::new('cordon', 'cordon', [CompletionResultType]::ParameterValue, 'Put sites in maintenance until a time: still judged and shown, no per-site alerts')
            [CompletionResult]::new('uncordon', 'uncordon', [CompletionResultType]::ParameterValue, 'End sites'' maintenance windows now')
            [CompletionResult]::new('quarantine', 'quarantine', [CompletionResultType]::ParameterValue, 'Leave what sites report out of every fleet incident: still judged and shown')
            [CompletionResult]::new('unquarantine', 'unquarantine', [CompletionResultType]::ParameterValue, 'Let sites'' signals count in fleet incidents again')
            [CompletionResult]::new('schedule', 'schedule', [CompletionResultType]::ParameterValue, 'Say when sites are expected offline: silent inside it they are Sleeping and page nobody')
            [CompletionResult]::new('install', 'install', [CompletionResultType]::ParameterValue, 'Print (or apply) the manifests for the CRDs and the operator')
            [CompletionResult]::new('uninstall', 'uninstall', [CompletionResultType]::ParameterValue, 'Remove the operator, its RBAC and monitoring objects (the CRDs and every site only with --crds)')
            [CompletionResult]::new('completion', 'completion', [CompletionResultType]::ParameterValue, 'Print a shell completion script')
            [CompletionResult]::new('version', 'version', [CompletionResultType]::ParameterValue, 'Print the version')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'kubectl-fleet;register' {
            [CompletionResult]::new('--display-name', '--display-name', [CompletionResultType]::ParameterName, 'Human-friendly name shown by `status`, at most 128 characters (default: the site name)')
            [CompletionResult]::new('--region', '--region', [CompletionResultType]::ParameterName, 'Region of the site, a label value such as us-east-1')
            [CompletionResult]::new('--environment', '--environment', [CompletionResultType]::ParameterName, 'Environment of the site (default for a new site: production)')
            [CompletionResult]::new('--tier', '--tier', [CompletionResultType]::ParameterName, 'Criticality tier, drives the remediation policy (default for a new site: standard)')
            [CompletionResult]::new('--capability', '--capability', [CompletionResultType]::ParameterName, 'What the fleet may do on the site; repeat for several (default for a new site: monitoring)')
            [CompletionResult]::new('--heartbeat-interval', '--heartbeat-interval', [CompletionResultType]::ParameterName, 'Seconds between heartbeats (Push) or probes (Pull), 10..3600 (default for a new site: 30)')
            [CompletionResult]::new('--max-concurrent-remediations', '--max-concurrent-remediations', [CompletionResultType]::ParameterName, 'Upper bound on remediations running at once on the site (default for a new site: 3)')
            [CompletionResult]::new('--token-ttl', '--token-ttl', [CompletionResultType]::ParameterName, 'Requested token lifetime, at least 10m, e.g. 30d, 12h (the API server may cap it)')
            [CompletionResult]::new('--member-kubeconfig', '--member-kubeconfig', [CompletionResultType]::ParameterName, 'Kubeconfig with admin access to the member cluster: with --pull, where the read-only identity is minted; with --push, where a former Pull registration''s is removed')
            [CompletionResult]::new('--member-context', '--member-context', [CompletionResultType]::ParameterName, 'Context of the member kubeconfig to use (default: its current context)')
            [CompletionResult]::new('--hub-server', '--hub-server', [CompletionResultType]::ParameterName, 'API server URL the edge must dial (default: the server of your kubeconfig context)')
            [CompletionResult]::new('--emit', '--emit', [CompletionResultType]::ParameterName, 'What to print: a hub kubeconfig, or a Secret manifest to apply on the edge cluster')
            [CompletionResult]::new('--output-file', '--output-file', [CompletionResultType]::ParameterName, 'Write the configuration to this file (mode 0600) instead of stdout')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format of stdout: the configuration itself, or a JSON summary')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format of stdout: the configuration itself, or a JSON summary')
            [CompletionResult]::new('-f', '-f', [CompletionResultType]::ParameterName, 'Register every FederatedCluster in FILE (multi-document YAML, a List, JSON), in every .yaml, .yml and .json file of DIR, or on stdin (-)')
            [CompletionResult]::new('--filename', '--filename', [CompletionResultType]::ParameterName, 'Register every FederatedCluster in FILE (multi-document YAML, a List, JSON), in every .yaml, .yml and .json file of DIR, or on stdin (-)')
            [CompletionResult]::new('--output-dir', '--output-dir', [CompletionResultType]::ParameterName, 'With -f: write each Push site''s edge configuration to DIR/SITE.kubeconfig (DIR/SITE.secret.yaml with --emit secret), mode 0600')
            [CompletionResult]::new('--concurrency', '--concurrency', [CompletionResultType]::ParameterName, 'With -f: how many sites to register at once, 1..64')
            [CompletionResult]::new('--offline', '--offline', [CompletionResultType]::ParameterName, 'An offline window in --tz local time: HH:MM-HH:MM every day (e.g. 22:00-06:00) or "DAY HH:MM-DAY HH:MM" every week (e.g. "Sat 00:00-Mon 06:00"); repeat for more')
            [CompletionResult]::new('--tz', '--tz', [CompletionResultType]::ParameterName, 'The IANA time zone of the --offline windows, e.g. Europe/Berlin')
            [CompletionResult]::new('--absent-up-to', '--absent-up-to', [CompletionResultType]::ParameterName, 'The longest the site may be silent at any time, e.g. 36h or 7d (1m to 7d)')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use (default: the current context)')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'Give up on a request after this long, like kubectl (e.g. 10s, 1m); 0, the default, waits for a response without limit, but connecting still gives up after 30s')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log detail on stderr, as kubectl''s -v: 1-3 info and an error''s causes, 4-5 debug, 6+ trace')
            [CompletionResult]::new('--v', '--v', [CompletionResultType]::ParameterName, 'Log detail on stderr, as kubectl''s -v: 1-3 info and an error''s causes, 4-5 debug, 6+ trace')
            [CompletionResult]::new('--no-auto-rotate', '--no-auto-rotate', [CompletionResultType]::ParameterName, 'Do not let the edge renew its own token (removes that permission on a re-run)')
            [CompletionResult]::new('--pull', '--pull', [CompletionResultType]::ParameterName, 'Pull mode: the hub probes the member with a read-only identity minted there (default: the site''s current mode; Push for a new site)')
            [CompletionResult]::new('--push', '--push', [CompletionResultType]::ParameterName, 'Push mode: the site''s edge dials home with a token minted here (switches a Pull site, removing the hub''s credential for the member)')
            [CompletionResult]::new('--store-kubeconfig-as-is', '--store-kubeconfig-as-is', [CompletionResultType]::ParameterName, 'Pull mode: store the member kubeconfig unchanged instead of minting a read-only identity')
            [CompletionResult]::new('-y', '-y', [CompletionResultType]::ParameterName, 'Switch the site''s mode without asking (required when there is no terminal to ask on)')
            [CompletionResult]::new('--yes', '--yes', [CompletionResultType]::ParameterName, 'Switch the site''s mode without asking (required when there is no terminal to ask on)')
            [CompletionResult]::new('--insecure-skip-tls-verify', '--insecure-skip-tls-verify', [CompletionResultType]::ParameterName, 'Tell the edge not to verify the hub''s certificate (insecure; only when you must)')
            [CompletionResult]::new('--rotate', '--rotate', [CompletionResultType]::ParameterName, 'With -f: mint a new credential for every site even when the one handed out still works')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'kubectl-fleet;rotate' {
            [CompletionResult]::new('-l', '-l', [CompletionResultType]::ParameterName, 'Every site whose labels match, as kubectl (e.g. -l federation.kubectl-fleet.dev/tier=critical, or a label of your inventory such as -l store-group=g1)')
            [CompletionResult]::new('--selector', '--selector', [CompletionResultType]::ParameterName, 'Every site whose labels match, as kubectl (e.g. -l federation.kubectl-fleet.dev/tier=critical, or a label of your inventory such as -l store-group=g1)')
            [CompletionResult]::new('--region', '--region', [CompletionResultType]::ParameterName, 'Every site in this region (its federation.kubectl-fleet.dev/region label); with -l, sites matching both')
            [CompletionResult]::new('--output-dir', '--output-dir', [CompletionResultType]::ParameterName, 'With -l/--region: write each site''s edge configuration to DIR/SITE.kubeconfig (DIR/SITE.secret.yaml with --emit secret), mode 0600')
            [CompletionResult]::new('--concurrency', '--concurrency', [CompletionResultType]::ParameterName, 'With -l: how many sites to rotate at once, 1..64')
            [CompletionResult]::new('--token-ttl', '--token-ttl', [CompletionResultType]::ParameterName, 'Requested token lifetime, at least 10m, e.g. 30d, 12h (the API server may cap it)')
            [CompletionResult]::new('--hub-server', '--hub-server', [CompletionResultType]::ParameterName, 'API server URL the edge must dial (default: the server of your kubeconfig context)')
            [CompletionResult]::new('--emit', '--emit', [CompletionResultType]::ParameterName, 'What to print: a hub kubeconfig, or a Secret manifest to apply on the edge cluster')
            [CompletionResult]::new('--output-file', '--output-file', [CompletionResultType]::ParameterName, 'Write the configuration to this file (mode 0600) instead of stdout')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format of stdout: the configuration itself, or a JSON summary')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format of stdout: the configuration itself, or a JSON summary')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use (default: the current context)')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'Give up on a request after this long, like kubectl (e.g. 10s, 1m); 0, the default, waits for a response without limit, but connecting still gives up after 30s')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log detail on stderr, as kubectl''s -v: 1-3 info and an error''s causes, 4-5 debug, 6+ trace')
            [CompletionResult]::new('--v', '--v', [CompletionResultType]::ParameterName, 'Log detail on stderr, as kubectl''s -v: 1-3 info and an error''s causes, 4-5 debug, 6+ trace')
            [CompletionResult]::new('-y', '-y', [CompletionResultType]::ParameterName, 'With -l: do not ask for confirmation (required when there is no terminal to ask on)')
            [CompletionResult]::new('--yes', '--yes', [CompletionResultType]::ParameterName, 'With -l: do not ask for confirmation (required when there is no terminal to ask on)')
            [CompletionResult]::new('--revoke', '--revoke', [CompletionResultType]::ParameterName, 'Recreate the site''s ServiceAccount first, so every older token stops working')
            [CompletionResult]::new('--insecure-skip-tls-verify', '--insecure-skip-tls-verify', [CompletionResultType]::ParameterName, 'Tell the edge not to verify the hub''s certificate (insecure; only when you must)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'kubectl-fleet;unregister' {
            [CompletionResult]::new('-l', '-l', [CompletionResultType]::ParameterName, 'Every site whose labels match, as kubectl (e.g. -l federation.kubectl-fleet.dev/tier=critical, or a label of your inventory such as -l store-group=g1)')
            [CompletionResult]::new('--selector', '--selector', [CompletionResultType]::ParameterName, 'Every site whose labels match, as kubectl (e.g. -l federation.kubectl-fleet.dev/tier=critical, or a label of your inventory such as -l store-group=g1)')
            [CompletionResult]::new('--region', '--region', [CompletionResultType]::ParameterName, 'Every site in this region (its federation.kubectl-fleet.dev/region label); with -l, sites matching both')
            [CompletionResult]::new('--concurrency', '--concurrency', [CompletionResultType]::ParameterName, 'With -l: how many sites to remove at once, 1..64')
            [CompletionResult]::new('--member-kubeconfig', '--member-kubeconfig', [CompletionResultType]::ParameterName, 'Pull mode: also remove the site''s own identity `register --pull` minted on the member')
            [CompletionResult]::new('--member-context', '--member-context', [CompletionResultType]::ParameterName, 'Context of the member kubeconfig (default: its current context)')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use (default: the current context)')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'Give up on a request after this long, like kubectl (e.g. 10s, 1m); 0, the default, waits for a response without limit, but connecting still gives up after 30s')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log detail on stderr, as kubectl''s -v: 1-3 info and an error''s causes, 4-5 debug, 6+ trace')
            [CompletionResult]::new('--v', '--v', [CompletionResultType]::ParameterName, 'Log detail on stderr, as kubectl''s -v: 1-3 info and an error''s causes, 4-5 debug, 6+ trace')
            [CompletionResult]::new('-y', '-y', [CompletionResultType]::ParameterName, 'Do not ask for confirmation (required when stdin is not a terminal)')
            [CompletionResult]::new('--yes', '--yes', [CompletionResultType]::ParameterName, 'Do not ask for confirmation (required when stdin is not a terminal)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'kubectl-fleet;status' {
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('-l', '-l', [CompletionResultType]::ParameterName, 'Label selector, as kubectl (e.g. -l team=ml,region!=eu)')
            [CompletionResult]::new('--selector', '--selector', [CompletionResultType]::ParameterName, 'Label selector, as kubectl (e.g. -l team=ml,region!=eu)')
            [CompletionResult]::new('--tier', '--tier', [CompletionResultType]::ParameterName, 'Only sites of this tier')
            [CompletionResult]::new('--environment', '--environment', [CompletionResultType]::ParameterName, 'Only sites of this environment')
            [CompletionResult]::new('--region', '--region', [CompletionResultType]::ParameterName, 'Only sites in this region')
            [CompletionResult]::new('--phase', '--phase', [CompletionResultType]::ParameterName, 'Only sites in this phase')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Only sites whose edge reports this version (as the footer''s Edges: line names it; a leading v is ignored)')
            [CompletionResult]::new('--incident', '--incident', [CompletionResultType]::ParameterName, 'Only the sites of this incident (xc-, cc- or go- id, as `kubectl fleet incidents` lists them)')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'Colour the phase column')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use (default: the current context)')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'Give up on a request after this long, like kubectl (e.g. 10s, 1m); 0, the default, waits for a response without limit, but connecting still gives up after 30s')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log detail on stderr, as kubectl''s -v: 1-3 info and an error''s causes, 4-5 debug, 6+ trace')
            [CompletionResult]::new('--v', '--v', [CompletionResultType]::ParameterName, 'Log detail on stderr, as kubectl''s -v: 1-3 info and an error''s causes, 4-5 debug, 6+ trace')
            [CompletionResult]::new('-w', '-w', [CompletionResultType]::ParameterName, 'Keep running and redraw when sites change (at most once a second)')
            [CompletionResult]::new('--watch', '--watch', [CompletionResultType]::ParameterName, 'Keep running and redraw when sites change (at most once a second)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'kubectl-fleet;list' {
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('-l', '-l', [CompletionResultType]::ParameterName, 'Label selector, as kubectl (e.g. -l team=ml,region!=eu)')
            [CompletionResult]::new('--selector', '--selector', [CompletionResultType]::ParameterName, 'Label selector, as kubectl (e.g. -l team=ml,region!=eu)')
            [CompletionResult]::new('--tier', '--tier', [CompletionResultType]::ParameterName, 'Only sites of this tier')
            [CompletionResult]::new('--environment', '--environment', [CompletionResultType]::ParameterName, 'Only sites of this environment')
            [CompletionResult]::new('--region', '--region', [CompletionResultType]::ParameterName, 'Only sites in this region')
            [CompletionResult]::new('--phase', '--phase', [CompletionResultType]::ParameterName, 'Only sites in this phase')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Only sites whose edge reports this version (as the footer''s Edges: line names it; a leading v is ignored)')
            [CompletionResult]::new('--incident', '--incident', [CompletionResultType]::ParameterName, 'Only the sites of this incident (xc-, cc- or go- id, as `kubectl fleet incidents` lists them)')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'Colour the phase column')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use (default: the current context)')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'Give up on a request after this long, like kubectl (e.g. 10s, 1m); 0, the default, waits for a response without limit, but connecting still gives up after 30s')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log detail on stderr, as kubectl''s -v: 1-3 info and an error''s causes, 4-5 debug, 6+ trace')
            [CompletionResult]::new('--v', '--v', [CompletionResultType]::ParameterName, 'Log detail on stderr, as kubectl''s -v: 1-3 info and an error''s causes, 4-5 debug, 6+ trace')
            [CompletionResult]::new('-w', '-w', [CompletionResultType]::ParameterName, 'Keep running and redraw when sites change (at most once a second)')
            [CompletionResult]::new('--watch', '--watch', [CompletionResultType]::ParameterName, 'Keep running and redraw when sites change (at most once a second)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'kubectl-fleet;get' {
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('-l', '-l', [CompletionResultType]::ParameterName, 'Label selector, as kubectl (e.g. -l team=ml,region!=eu)')
            [CompletionResult]::new('--selector', '--selector', [CompletionResultType]::ParameterName, 'Label selector, as kubectl (e.g. -l team=ml,region!=eu)')
            [CompletionResult]::new('--tier', '--tier', [CompletionResultType]::ParameterName, 'Only sites of this tier')
            [CompletionResult]::new('--environment', '--environment', [CompletionResultType]::ParameterName, 'Only sites of this environment')
            [CompletionResult]::new('--region', '--region', [CompletionResultType]::ParameterName, 'Only sites in this region')
            [CompletionResult]::new('--phase', '--phase', [CompletionResultType]::ParameterName, 'Only sites in this phase')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Only sites whose edge reports this version (as the footer''s Edges: line names it; a leading v is ignored)')
            [CompletionResult]::new('--incident', '--incident', [CompletionResultType]::ParameterName, 'Only the sites of this incident (xc-, cc- or go- id, as `kubectl fleet incidents` lists them)')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'Colour the phase column')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use (default: the current context)')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'Give up on a request after this long, like kubectl (e.g. 10s, 1m); 0, the default, waits for a response without limit, but connecting still gives up after 30s')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log detail on stderr, as kubectl''s -v: 1-3 info and an error''s causes, 4-5 debug, 6+ trace')
            [CompletionResult]::new('--v', '--v', [CompletionResultType]::ParameterName, 'Log detail on stderr, as kubectl''s -v: 1-3 info and an error''s causes, 4-5 debug, 6+ trace')
            [CompletionResult]::new('-w', '-w', [CompletionResultType]::ParameterName, 'Keep running and redraw when sites change (at most once a second)')
            [CompletionResult]::new('--watch', '--watch', [CompletionResultType]::ParameterName, 'Keep running and redraw when sites change (at most once a second)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'kubectl-fleet;describe' {
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use (default: the current context)')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'Give up on a request after this long, like kubectl (e.g. 10s, 1m); 0, the default, waits for a response without limit, but connecting still gives up after 30s')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log detail on stderr, as kubectl''s -v: 1-3 info and an error''s causes, 4-5 debug, 6+ trace')
            [CompletionResult]::new('--v', '--v', [CompletionResultType]::ParameterName, 'Log detail on stderr, as kubectl''s -v: 1-3 info and an error''s causes, 4-5 debug, 6+ trace')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'kubectl-fleet;policy' {
            [CompletionResult]::new('--tier', '--tier', [CompletionResultType]::ParameterName, 'Only this tier')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use (default: the current context)')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'Give up on a request after this long, like kubectl (e.g. 10s, 1m); 0, the default, waits for a response without limit, but connecting still gives up after 30s')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log detail on stderr, as kubectl''s -v: 1-3 info and an error''s causes, 4-5 debug, 6+ trace')
            [CompletionResult]::new('--v', '--v', [CompletionResultType]::ParameterName, 'Log detail on stderr, as kubectl''s -v: 1-3 info and an error''s causes, 4-5 debug, 6+ trace')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'kubectl-fleet;incidents' {
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('-l', '-l', [CompletionResultType]::ParameterName, 'Label selector limiting the sites whose signals are shown')
            [CompletionResult]::new('--selector', '--selector', [CompletionResultType]::ParameterName, 'Label selector limiting the sites whose signals are shown')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'Colour severities')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use (default: the current context)')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'Give up on a request after this long, like kubectl (e.g. 10s, 1m); 0, the default, waits for a response without limit, but connecting still gives up after 30s')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log detail on stderr, as kubectl''s -v: 1-3 info and an error''s causes, 4-5 debug, 6+ trace')
            [CompletionResult]::new('--v', '--v', [CompletionResultType]::ParameterName, 'Log detail on stderr, as kubectl''s -v: 1-3 info and an error''s causes, 4-5 debug, 6+ trace')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'kubectl-fleet;cordon' {
            [CompletionResult]::new('-l', '-l', [CompletionResultType]::ParameterName, 'Every site whose labels match, as kubectl (e.g. -l federation.kubectl-fleet.dev/tier=critical, or a label of your inventory such as -l store-group=g1)')
            [CompletionResult]::new('--selector', '--selector', [CompletionResultType]::ParameterName, 'Every site whose labels match, as kubectl (e.g. -l federation.kubectl-fleet.dev/tier=critical, or a label of your inventory such as -l store-group=g1)')
            [CompletionResult]::new('--region', '--region', [CompletionResultType]::ParameterName, 'Every site in this region (its federation.kubectl-fleet.dev/region label); with -l, sites matching both')
            [CompletionResult]::new('--for', '--for', [CompletionResultType]::ParameterName, 'How long the window lasts from now, e.g. 2h, 1d (default 1h; at most 30d)')
            [CompletionResult]::new('--until', '--until', [CompletionResultType]::ParameterName, 'When the window ends, RFC 3339 with an offset, e.g. 2026-01-02T15:04:05Z (at most 30d ahead)')
            [CompletionResult]::new('--reason', '--reason', [CompletionResultType]::ParameterName, 'Why, shown by describe, -o json and the REST API (at most 256 characters; "" clears it)')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use (default: the current context)')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'Give up on a request after this long, like kubectl (e.g. 10s, 1m); 0, the default, waits for a response without limit, but connecting still gives up after 30s')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log detail on stderr, as kubectl''s -v: 1-3 info and an error''s causes, 4-5 debug, 6+ trace')
            [CompletionResult]::new('--v', '--v', [CompletionResultType]::ParameterName, 'Log detail on stderr, as kubectl''s -v: 1-3 info and an error''s causes, 4-5 debug, 6+ trace')
            [CompletionResult]::new('-y', '-y', [CompletionResultType]::ParameterName, 'With -l/--region: do not ask for confirmation (required when stdin is not a terminal)')
            [CompletionResult]::new('--yes', '--yes', [CompletionResultType]::ParameterName, 'With -l/--region: do not ask for confirmation (required when stdin is not a terminal)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'kubectl-fleet;uncordon' {
            [CompletionResult]::new('-l', '-l', [CompletionResultType]::ParameterName, 'Every site whose labels match, as kubectl (e.g. -l federation.kubectl-fleet.dev/tier=critical, or a label of your inventory such as -l store-group=g1)')
            [CompletionResult]::new('--selector', '--selector', [CompletionResultType]::ParameterName, 'Every site whose labels match, as kubectl (e.g. -l federation.kubectl-fleet.dev/tier=critical, or a label of your inventory such as -l store-group=g1)')
            [CompletionResult]::new('--region', '--region', [CompletionResultType]::ParameterName, 'Every site in this region (its federation.kubectl-fleet.dev/region label); with -l, sites matching both')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use (default: the current context)')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'Give up on a request after this long, like kubectl (e.g. 10s, 1m); 0, the default, waits for a response without limit, but connecting still gives up after 30s')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log detail on stderr, as kubectl''s -v: 1-3 info and an error''s causes, 4-5 debug, 6+ trace')
            [CompletionResult]::new('--v', '--v', [CompletionResultType]::ParameterName, 'Log detail on stderr, as kubectl''s -v: 1-3 info and an error''s causes, 4-5 debug, 6+ trace')
            [CompletionResult]::new('-y', '-y', [CompletionResultType]::ParameterName, 'With -l/--region: do not ask for confirmation (required when stdin is not a terminal)')
            [CompletionResult]::new('--yes', '--yes', [CompletionResultType]::ParameterName, 'With -l/--region: do not ask for confirmation (required when stdin is not a terminal)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'kubectl-fleet;quarantine' {
            [CompletionResult]::new('-l', '-l', [CompletionResultType]::ParameterName, 'Every site whose labels match, as kubectl (e.g. -l federation.kubectl-fleet.dev/tier=critical, or a label of your inventory such as -l store-group=g1)')
            [CompletionResult]::new('--selector', '--selector', [CompletionResultType]::ParameterName, 'Every site whose labels match, as kubectl (e.g. -l federation.kubectl-fleet.dev/tier=critical, or a label of your inventory such as -l store-group=g1)')
            [CompletionResult]::new('--region', '--region', [CompletionResultType]::ParameterName, 'Every site in this region (its federation.kubectl-fleet.dev/region label); with -l, sites matching both')
            [CompletionResult]::new('--reason', '--reason', [CompletionResultType]::ParameterName, 'Why, shown by describe, incidents, -o json and the REST API (at most 256 characters; "" clears it)')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use (default: the current context)')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'Give up on a request after this long, like kubectl (e.g. 10s, 1m); 0, the default, waits for a response without limit, but connecting still gives up after 30s')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log detail on stderr, as kubectl''s -v: 1-3 info and an error''s causes, 4-5 debug, 6+ trace')
            [CompletionResult]::new('--v', '--v', [CompletionResultType]::ParameterName, 'Log detail on stderr, as kubectl''s -v: 1-3 info and an error''s causes, 4-5 debug, 6+ trace')
            [CompletionResult]::new('-y', '-y', [CompletionResultType]::ParameterName, 'With -l/--region: do not ask for confirmation (required when stdin is not a terminal)')
            [CompletionResult]::new('--yes', '--yes', [CompletionResultType]::ParameterName, 'With -l/--region: do not ask for confirmation (required when stdin is not a terminal)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'kubectl-fleet;unquarantine' {
            [CompletionResult]::new('-l', '-l', [CompletionResultType]::ParameterName, 'Every site whose labels match, as kubectl (e.g. -l federation.kubectl-fleet.dev/tier=critical, or a label of your inventory such as -l store-group=g1)')
            [CompletionResult]::new('--selector', '--selector', [CompletionResultType]::ParameterName, 'Every site whose labels match, as kubectl (e.g. -l federation.kubectl-fleet.dev/tier=critical, or a label of your inventory such as -l store-group=g1)')
            [CompletionResult]::new('--region', '--region', [CompletionResultType]::ParameterName, 'Every site in this region (its federation.kubectl-fleet.dev/region label); with -l, sites matching both')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use (default: the current context)')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'Give up on a request after this long, like kubectl (e.g. 10s, 1m); 0, the default, waits for a response without limit, but connecting still gives up after 30s')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log detail on stderr, as kubectl''s -v: 1-3 info and an error''s causes, 4-5 debug, 6+ trace')
            [CompletionResult]::new('--v', '--v', [CompletionResultType]::ParameterName, 'Log detail on stderr, as kubectl''s -v: 1-3 info and an error''s causes, 4-5 debug, 6+ trace')
            [CompletionResult]::new('-y', '-y', [CompletionResultType]::ParameterName, 'With -l/--region: do not ask for confirmation (required when stdin is not a terminal)')
            [CompletionResult]::new('--yes', '--yes', [CompletionResultType]::ParameterName, 'With -l/--region: do not ask for confirmation (required when stdin is not a terminal)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'kubectl-fleet;schedule' {
            [CompletionResult]::new('-l', '-l', [CompletionResultType]::ParameterName, 'Every site whose labels match, as kubectl (e.g. -l federation.kubectl-fleet.dev/tier=critical, or a label of your inventory such as -l store-group=g1)')
            [CompletionResult]::new('--selector', '--selector', [CompletionResultType]::ParameterName, 'Every site whose labels match, as kubectl (e.g. -l federation.kubectl-fleet.dev/tier=critical, or a label of your inventory such as -l store-group=g1)')
            [CompletionResult]::new('--region', '--region', [CompletionResultType]::ParameterName, 'Every site in this region (its federation.kubectl-fleet.dev/region label); with -l, sites matching both')
            [CompletionResult]::new('--offline', '--offline', [CompletionResultType]::ParameterName, 'An offline window in --tz local time: HH:MM-HH:MM every day (e.g. 22:00-06:00) or "DAY HH:MM-DAY HH:MM" every week (e.g. "Sat 00:00-Mon 06:00"); repeat for more')
            [CompletionResult]::new('--tz', '--tz', [CompletionResultType]::ParameterName, 'The IANA time zone of the --offline windows, e.g. Europe/Berlin')
            [CompletionResult]::new('--absent-up-to', '--absent-up-to', [CompletionResultType]::ParameterName, 'The longest the site may be silent at any time, e.g. 36h or 7d (1m to 7d)')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use (default: the current context)')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'Give up on a request after this long, like kubectl (e.g. 10s, 1m); 0, the default, waits for a response without limit, but connecting still gives up after 30s')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log detail on stderr, as kubectl''s -v: 1-3 info and an error''s causes, 4-5 debug, 6+ trace')
            [CompletionResult]::new('--v', '--v', [CompletionResultType]::ParameterName, 'Log detail on stderr, as kubectl''s -v: 1-3 info and an error''s causes, 4-5 debug, 6+ trace')
            [CompletionResult]::new('-y', '-y', [CompletionResultType]::ParameterName, 'With -l/--region: do not ask for confirmation (required when stdin is not a terminal)')
            [CompletionResult]::new('--yes', '--yes', [CompletionResultType]::ParameterName, 'With -l/--region: do not ask for confirmation (required when stdin is not a terminal)')
            [CompletionResult]::new('--clear', '--clear', [CompletionResultType]::ParameterName, 'Remove the schedule: the sites'' silence is judged as any other again')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'kubectl-fleet;install' {
            [CompletionResult]::new('--role', '--role', [CompletionResultType]::ParameterName, 'Which operator role to install')
            [CompletionResult]::new('--site', '--site', [CompletionResultType]::ParameterName, 'Edge role: the site this cluster is registered as')
            [CompletionResult]::new('--hub-kubeconfig', '--hub-kubeconfig', [CompletionResultType]::ParameterName, 'Edge role: hub kubeconfig from `register` to include as Secret fleet-system/fleet-hub-kubeconfig')
            [CompletionResult]::new('--image', '--image', [CompletionResultType]::ParameterName, 'Operator container image [default: ghcr.io/kubectl-fleet/fleet-operator:v0.1.0]')
            [CompletionResult]::new('--tls-secret', '--tls-secret', [CompletionResultType]::ParameterName, 'Serve HTTPS with the certificate in this Secret of fleet-system (tls.crt, tls.key; the hub''s also ca.crt, and it must name the hub''s Service), not one install makes (hub) or a self-signed one (edge)')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use (default: the current context)')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'Give up on a request after this long, like kubectl (e.g. 10s, 1m); 0, the default, waits for a response without limit, but connecting still gives up after 30s')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log detail on stderr, as kubectl''s -v: 1-3 info and an error''s causes, 4-5 debug, 6+ trace')
            [CompletionResult]::new('--v', '--v', [CompletionResultType]::ParameterName, 'Log detail on stderr, as kubectl''s -v: 1-3 info and an error''s causes, 4-5 debug, 6+ trace')
            [CompletionResult]::new('--apply', '--apply', [CompletionResultType]::ParameterName, 'Apply to the cluster (server-side apply) instead of printing')
            [CompletionResult]::new('--force-conflicts', '--force-conflicts', [CompletionResultType]::ParameterName, 'With --apply: replace values someone changed on the cluster (kept by default)')
            [CompletionResult]::new('-y', '-y', [CompletionResultType]::ParameterName, 'With --role edge --apply: install even onto a cluster that is a fleet hub (asked on a terminal)')
            [CompletionResult]::new('--yes', '--yes', [CompletionResultType]::ParameterName, 'With --role edge --apply: install even onto a cluster that is a fleet hub (asked on a terminal)')
            [CompletionResult]::new('--crds-only', '--crds-only', [CompletionResultType]::ParameterName, 'Only the CustomResourceDefinitions')
            [CompletionResult]::new('--with-monitoring', '--with-monitoring', [CompletionResultType]::ParameterName, 'Hub role: also a ServiceMonitor, the PrometheusRule alerts, the Grafana dashboard ConfigMap and a ClusterRole for Prometheus to read /metrics (needs the Prometheus Operator CRDs)')
            [CompletionResult]::new('--with-cert-manager', '--with-cert-manager', [CompletionResultType]::ParameterName, 'Hub role: have cert-manager make and renew the serving certificate instead of install (needs cert-manager''s CRDs)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'kubectl-fleet;uninstall' {
            [CompletionResult]::new('--role', '--role', [CompletionResultType]::ParameterName, 'Remove only this role''s operator (default: both, hub and edge)')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use (default: the current context)')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'Give up on a request after this long, like kubectl (e.g. 10s, 1m); 0, the default, waits for a response without limit, but connecting still gives up after 30s')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log detail on stderr, as kubectl''s -v: 1-3 info and an error''s causes, 4-5 debug, 6+ trace')
            [CompletionResult]::new('--v', '--v', [CompletionResultType]::ParameterName, 'Log detail on stderr, as kubectl''s -v: 1-3 info and an error''s causes, 4-5 debug, 6+ trace')
            [CompletionResult]::new('--crds', '--crds', [CompletionResultType]::ParameterName, 'Also delete the CRDs, and with them every registered site')
            [CompletionResult]::new('-y', '-y', [CompletionResultType]::ParameterName, 'Do not ask before removing the hub role from a fleet with sites, or deleting the CRDs (required then when stdin is not a terminal)')
            [CompletionResult]::new('--yes', '--yes', [CompletionResultType]::ParameterName, 'Do not ask before removing the hub role from a fleet with sites, or deleting the CRDs (required then when stdin is not a terminal)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'kubectl-fleet;completion' {
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use (default: the current context)')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'Give up on a request after this long, like kubectl (e.g. 10s, 1m); 0, the default, waits for a response without limit, but connecting still gives up after 30s')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log detail on stderr, as kubectl''s -v: 1-3 info and an error''s causes, 4-5 debug, 6+ trace')
            [CompletionResult]::new('--v', '--v', [CompletionResultType]::ParameterName, 'Log detail on stderr, as kubectl''s -v: 1-3 info and an error''s causes, 4-5 debug, 6+ trace')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'kubectl-fleet;version' {
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use (default: the current context)')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'Give up on a request after this long, like kubectl (e.g. 10s, 1m); 0, the default, waits for a response without limit, but connecting still gives up after 30s')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log detail on stderr, as kubectl''s -v: 1-3 info and an error''s causes, 4-5 debug, 6+ trace')
            [CompletionResult]::new('--v', '--v', [CompletionResultType]::ParameterName, 'Log detail on stderr, as kubectl''s -v: 1-3 info and an error''s causes, 4-5 debug, 6+ trace')
            [CompletionResult]::new('--short', '--short', [CompletionResultType]::ParameterName, 'Print only the version number')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'kubectl-fleet;help' {
            [CompletionResult]::new('register', 'register', [CompletionResultType]::ParameterValue, 'Register a site on the hub and print the edge''s configuration')
            [CompletionResult]::new('rotate', 'rotate', [CompletionResultType]::ParameterValue, 'Mint a fresh token for a site (optionally revoking all older ones)')
            [CompletionResult]::new('unregister', 'unregister', [CompletionResultType]::ParameterValue, 'Remove everything `register` created for a site')
            [CompletionResult]::new('status', 'status', [CompletionResultType]::ParameterValue, 'Show per-site and fleet-wide status')
            [CompletionResult]::new('describe', 'describe', [CompletionResultType]::ParameterValue, 'Show one site in full: conditions with reasons, inventory, signals and policy')
            [CompletionResult]::new('policy', 'policy', [CompletionResultType]::ParameterValue, 'Show the remediation policy per tier and severity')
            [CompletionResult]::new('incidents', 'incidents', [CompletionResultType]::ParameterValue, 'Show active correlations, cascades and grouped outages, or one incident by its ID')
            [CompletionResult]::new('cordon', 'cordon', [CompletionResultType]::ParameterValue, 'Put sites in maintenance until a time: still judged and shown, no per-site alerts')
            [CompletionResult]::new('uncordon', 'uncordon', [CompletionResultType]::ParameterValue, 'End sites'' maintenance windows now')
            [CompletionResult]::new('quarantine', 'quarantine', [CompletionResultType]::ParameterValue, 'Leave what sites report out of every fleet incident: still judged and shown')
            [CompletionResult]::new('unquarantine', 'unquarantine', [CompletionResultType]::ParameterValue, 'Let sites'' signals count in fleet incidents again')
            [CompletionResult]::new('schedule', 'schedule', [CompletionResultType]::ParameterValue, 'Say when sites are expected offline: silent inside it they are Sleeping and page nobody')
            [CompletionResult]::new('install', 'install', [CompletionResultType]::ParameterValue, 'Print (or apply) the manifests for the CRDs and the operator')
            [CompletionResult]::new('uninstall', 'uninstall', [CompletionResultType]::ParameterValue, 'Remove the operator, its RBAC and monitoring objects (the CRDs and every site only with --crds)')
            [CompletionResult]::new('completion', 'completion', [CompletionResultType]::ParameterValue, 'Print a shell completion script')
            [CompletionResult]::new('version', 'version', [CompletionResultType]::ParameterValue, 'Print the version')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'kubectl-fleet;help;register' {
            break
        }
        'kubectl-fleet;help;rotate' {
            break
        }
        'kubectl-fleet;help;unregister' {
            break
        }
        'kubectl-fleet;help;status' {
            break
        }
        'kubectl-fleet;help;describe' {
            break
        }
        'kubectl-fleet;help;policy' {
            break
        }
        'kubectl-fleet;help;incidents' {
            break
        }
        'kubectl-fleet;help;cordon' {
            break
        }
        'kubectl-fleet;help;uncordon' {
            break
        }
        'kubectl-fleet;help;quarantine' {
            break
        }
        'kubectl-fleet;help;unquarantine' {
            break
        }
        'kubectl-fleet;help;schedule' {
            break
        }
        'kubectl-fleet;help;install' {
            break
        }
        'kubectl-fleet;help;uninstall' {
            break
        }
        'kubectl-fleet;help;completion' {
            break
        }
        'kubectl-fleet;help;version' {
            break
        }
        'kubectl-fleet;help;help' {
            break
        }
    })

    $completions.Where{ $_.CompletionText -like "$wordToComplete*" } |
        Sort-Object -Property ListItemText
}
