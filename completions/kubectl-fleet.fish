# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_kubectl_fleet_global_optspecs
    string join \n kubeconfig= context= request-timeout= v/v= h/help V/version
end

function __fish_kubectl_fleet_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_kubectl_fleet_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_kubectl_fleet_using_subcommand
    set -l cmd (__fish_kubectl_fleet_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c kubectl-fleet -n "__fish_kubectl_fleet_needs_command" -l kubeconfig -d 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)' -r -F
complete -c kubectl-fleet -n "__fish_kubectl_fleet_needs_command" -l context -d 'The kubeconfig context to use (default: the current context)' -r
complete -c kubectl-fleet -n "__fish_kubectl_fleet_needs_command" -l request-timeout -d 'Give up on a request after this long, like kubectl (e.g. 10s, 1m); 0, the default, waits for a response without limit, but connecting still gives up after 30s' -r
complete -c kubectl-fleet -n "__fish_kubectl_fleet_needs_command" -s v -l v -d 'Log detail on stderr, as kubectl\'s -v: 1-3 info and an error\'s causes, 4-5 debug, 6+ trace' -r
complete -c kubectl-fleet -n "__fish_kubectl_fleet_needs_command" -s h -l help -d 'Print help'
complete -c kubectl-fleet -n "__fish_kubectl_fleet_needs_command" -s V -l version -d 'Print version'
complete -c kubectl-fleet -n "__fish_kubectl_fleet_needs_command" -f -a "register" -d 'Register a site on the hub and print the edge\'s configuration'
complete -c kubectl-fleet -n "__fish_kubectl_fleet_needs_command" -f -a "rotate" -d 'Mint a fresh token for a site (optionally revoking all older ones)'
complete -c kubectl-fleet -n "__fish_kubectl_fleet_needs_command" -f -a "unregister" -d 'Remove everything `register` created for a site'
complete -c kubectl-fleet -n "__fish_kubectl_fleet_needs_command" -f -a "status" -d 'Show per-site and fleet-wide status'
complete -c kubectl-fleet -n "__fish_kubectl_fleet_needs_command" -f -a "list" -d 'Show per-site and fleet-wide status'
complete -c kubectl-fleet -n "__fish_kubectl_fleet_needs_command" -f -a "get" -d 'Show per-site and fleet-wide status'
complete -c kubectl-fleet -n "__fish_kubectl_fleet_needs_command" -f -a "describe" -d 'Show one site in full: conditions with reasons, inventory, signals and policy'
complete -c kubectl-fleet -n "__fish_kubectl_fleet_needs_command" -f -a "policy" -d 'Show the remediation policy per tier and severity'
complete -c kubectl-fleet -n "__fish_kubectl_fleet_needs_command" -f -a "incidents" -d 'Show active correlations, cascades and grouped outages, or one incident by its ID'
complete -c kubectl-fleet -n "__fish_kubectl_fleet_needs_command" -f -a "cordon" -d 'Put sites in maintenance until a time: still judged and shown, no per-site alerts'
complete -c kubectl-fleet -n "__fish_kubectl_fleet_needs_command" -f -a "uncordon" -d 'End sites\' maintenance windows now'
complete -c kubectl-fleet -n "__fish_kubectl_fleet_needs_command" -f -a "quarantine" -d 'Leave what sites report out of every fleet incident: still judged and shown'
complete -c kubectl-fleet -n "__fish_kubectl_fleet_needs_command" -f -a "unquarantine" -d 'Let sites\' signals count in fleet incidents again'
complete -c kubectl-fleet -n "__fish_kubectl_fleet_needs_command" -f -a "schedule" -d 'Say when sites are expected offline: silent inside it they are Sleeping and page nobody'
complete -c kubectl-fleet -n "__fish_kubectl_fleet_needs_command" -f -a "install" -d 'Print (or apply) the manifests for the CRDs and the operator'
complete -c kubectl-fleet -n "__fish_kubectl_fleet_needs_command" -f -a "uninstall" -d 'Remove the operator, its RBAC and monitoring objects (the CRDs and every site only with --crds)'
complete -c kubectl-fleet -n "__fish_kubectl_fleet_needs_command" -f -a "completion" -d 'Print a shell completion script'
complete -c kubectl-fleet -n "__fish_kubectl_fleet_needs_command" -f -a "version" -d 'Print the version'
complete -c kubectl-fleet -n "__fish_kubectl_fleet_needs_command" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand register" -l display-name -d 'Human-friendly name shown by `status`, at most 128 characters (default: the site name)' -r
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand register" -l region -d 'Region of the site, a label value such as us-east-1' -r
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand register" -l environment -d 'Environment of the site (default for a new site: production)' -r -f -a "development\t''
staging\t''
production\t''
dr\t''"
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand register" -l tier -d 'Criticality tier, drives the remediation policy (default for a new site: standard)' -r -f -a "critical\t''
standard\t''
non-critical\t''"
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand register" -l capability -d 'What the fleet may do on the site; repeat for several (default for a new site: monitoring)' -r -f -a "monitoring\t''
remediation\t''
chaos-engineering\t''"
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand register" -l heartbeat-interval -d 'Seconds between heartbeats (Push) or probes (Pull), 10..3600 (default for a new site: 30)' -r
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand register" -l max-concurrent-remediations -d 'Upper bound on remediations running at once on the site (default for a new site: 3)' -r
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand register" -l token-ttl -d 'Requested token lifetime, at least 10m, e.g. 30d, 12h (the API server may cap it)' -r
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand register" -l member-kubeconfig -d 'Kubeconfig with admin access to the member cluster: with --pull, where the read-only identity is minted; with --push, where a former Pull registration\'s is removed' -r -F
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand register" -l member-context -d 'Context of the member kubeconfig to use (default: its current context)' -r
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand register" -l hub-server -d 'API server URL the edge must dial (default: the server of your kubeconfig context)' -r
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand register" -l emit -d 'What to print: a hub kubeconfig, or a Secret manifest to apply on the edge cluster' -r -f -a "kubeconfig\t'A kubeconfig for the hub'
secret\t'Namespace + Secret `fleet-system/fleet-hub-kubeconfig` for the edge cluster'"
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand register" -l output-file -d 'Write the configuration to this file (mode 0600) instead of stdout' -r -F
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand register" -s o -l output -d 'Output format of stdout: the configuration itself, or a JSON summary' -r -f -a "config\t'The configuration (kubeconfig or Secret manifest)'
json\t'A JSON summary (objects, token expiry, whether the server capped it)'"
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand register" -s f -l filename -d 'Register every FederatedCluster in FILE (multi-document YAML, a List, JSON), in every .yaml, .yml and .json file of DIR, or on stdin (-)' -r -F
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand register" -l output-dir -d 'With -f: write each Push site\'s edge configuration to DIR/SITE.kubeconfig (DIR/SITE.secret.yaml with --emit secret), mode 0600' -r -F
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand register" -l concurrency -d 'With -f: how many sites to register at once, 1..64' -r
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand register" -l offline -d 'An offline window in --tz local time: HH:MM-HH:MM every day (e.g. 22:00-06:00) or "DAY HH:MM-DAY HH:MM" every week (e.g. "Sat 00:00-Mon 06:00"); repeat for more' -r
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand register" -l tz -d 'The IANA time zone of the --offline windows, e.g. Europe/Berlin' -r
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand register" -l absent-up-to -d 'The longest the site may be silent at any time, e.g. 36h or 7d (1m to 7d)' -r
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand register" -l kubeconfig -d 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)' -r -F
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand register" -l context -d 'The kubeconfig context to use (default: the current context)' -r
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand register" -l request-timeout -d 'Give up on a request after this long, like kubectl (e.g. 10s, 1m); 0, the default, waits for a response without limit, but connecting still gives up after 30s' -r
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand register" -s v -l v -d 'Log detail on stderr, as kubectl\'s -v: 1-3 info and an error\'s causes, 4-5 debug, 6+ trace' -r
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand register" -l no-auto-rotate -d 'Do not let the edge renew its own token (removes that permission on a re-run)'
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand register" -l pull -d 'Pull mode: the hub probes the member with a read-only identity minted there (default: the site\'s current mode; Push for a new site)'
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand register" -l push -d 'Push mode: the site\'s edge dials home with a token minted here (switches a Pull site, removing the hub\'s credential for the member)'
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand register" -l store-kubeconfig-as-is -d 'Pull mode: store the member kubeconfig unchanged instead of minting a read-only identity'
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand register" -s y -l yes -d 'Switch the site\'s mode without asking (required when there is no terminal to ask on)'
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand register" -l insecure-skip-tls-verify -d 'Tell the edge not to verify the hub\'s certificate (insecure; only when you must)'
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand register" -l rotate -d 'With -f: mint a new credential for every site even when the one handed out still works'
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand register" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand register" -s V -l version -d 'Print version'
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand rotate" -s l -l selector -d 'Every site whose labels match, as kubectl (e.g. -l federation.kubectl-fleet.dev/tier=critical, or a label of your inventory such as -l store-group=g1)' -r
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand rotate" -l region -d 'Every site in this region (its federation.kubectl-fleet.dev/region label); with -l, sites matching both' -r
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand rotate" -l output-dir -d 'With -l/--region: write each site\'s edge configuration to DIR/SITE.kubeconfig (DIR/SITE.secret.yaml with --emit secret), mode 0600' -r -F
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand rotate" -l concurrency -d 'With -l: how many sites to rotate at once, 1..64' -r
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand rotate" -l token-ttl -d 'Requested token lifetime, at least 10m, e.g. 30d, 12h (the API server may cap it)' -r
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand rotate" -l hub-server -d 'API server URL the edge must dial (default: the server of your kubeconfig context)' -r
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand rotate" -l emit -d 'What to print: a hub kubeconfig, or a Secret manifest to apply on the edge cluster' -r -f -a "kubeconfig\t'A kubeconfig for the hub'
secret\t'Namespace + Secret `fleet-system/fleet-hub-kubeconfig` for the edge cluster'"
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand rotate" -l output-file -d 'Write the configuration to this file (mode 0600) instead of stdout' -r -F
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand rotate" -s o -l output -d 'Output format of stdout: the configuration itself, or a JSON summary' -r -f -a "config\t'The configuration (kubeconfig or Secret manifest)'
json\t'A JSON summary (objects, token expiry, whether the server capped it)'"
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand rotate" -l kubeconfig -d 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)' -r -F
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand rotate" -l context -d 'The kubeconfig context to use (default: the current context)' -r
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand rotate" -l request-timeout -d 'Give up on a request after this long, like kubectl (e.g. 10s, 1m); 0, the default, waits for a response without limit, but connecting still gives up after 30s' -r
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand rotate" -s v -l v -d 'Log detail on stderr, as kubectl\'s -v: 1-3 info and an error\'s causes, 4-5 debug, 6+ trace' -r
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand rotate" -s y -l yes -d 'With -l: do not ask for confirmation (required when there is no terminal to ask on)'
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand rotate" -l revoke -d 'Recreate the site\'s ServiceAccount first, so every older token stops working'
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand rotate" -l insecure-skip-tls-verify -d 'Tell the edge not to verify the hub\'s certificate (insecure; only when you must)'
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand rotate" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand rotate" -s V -l version -d 'Print version'
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand unregister" -s l -l selector -d 'Every site whose labels match, as kubectl (e.g. -l federation.kubectl-fleet.dev/tier=critical, or a label of your inventory such as -l store-group=g1)' -r
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand unregister" -l region -d 'Every site in this region (its federation.kubectl-fleet.dev/region label); with -l, sites matching both' -r
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand unregister" -l concurrency -d 'With -l: how many sites to remove at once, 1..64' -r
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand unregister" -l member-kubeconfig -d 'Pull mode: also remove the site\'s own identity `register --pull` minted on the member' -r -F
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand unregister" -l member-context -d 'Context of the member kubeconfig (default: its current context)' -r
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand unregister" -l kubeconfig -d 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)' -r -F
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand unregister" -l context -d 'The kubeconfig context to use (default: the current context)' -r
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand unregister" -l request-timeout -d 'Give up on a request after this long, like kubectl (e.g. 10s, 1m); 0, the default, waits for a response without limit, but connecting still gives up after 30s' -r
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand unregister" -s v -l v -d 'Log detail on stderr, as kubectl\'s -v: 1-3 info and an error\'s causes, 4-5 debug, 6+ trace' -r
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand unregister" -s y -l yes -d 'Do not ask for confirmation (required when stdin is not a terminal)'
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand unregister" -s h -l help -d 'Print help'
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand unregister" -s V -l version -d 'Print version'
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand status" -s o -l output -d 'Output format' -r -f -a "table\t''
wide\t''
json\t''
yaml\t''
name\t''
jsonpath=\t''"
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand status" -s l -l selector -d 'Label selector, as kubectl (e.g. -l team=ml,region!=eu)' -r
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand status" -l tier -d 'Only sites of this tier' -r -f -a "critical\t''
standard\t''
non-critical\t''"
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand status" -l environment -d 'Only sites of this environment' -r -f -a "development\t''
staging\t''
production\t''
dr\t''"
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand status" -l region -d 'Only sites in this region' -r
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand status" -l phase -d 'Only sites in this phase' -r -f -a "Pending\t''
Connected\t''
Stale\t''
Unreachable\t''
Sleeping\t''"
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand status" -l version -d 'Only sites whose edge reports this version (as the footer\'s Edges: line names it; a leading v is ignored)' -r
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand status" -l incident -d 'Only the sites of this incident (xc-, cc- or go- id, as `kubectl fleet incidents` lists them)' -r
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand status" -l color -d 'Colour the phase column' -r -f -a "auto\t'Colour when stdout is a terminal and NO_COLOR is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand status" -l kubeconfig -d 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)' -r -F
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand status" -l context -d 'The kubeconfig context to use (default: the current context)' -r
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand status" -l request-timeout -d 'Give up on a request after this long, like kubectl (e.g. 10s, 1m); 0, the default, waits for a response without limit, but connecting still gives up after 30s' -r
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand status" -s v -l v -d 'Log detail on stderr, as kubectl\'s -v: 1-3 info and an error\'s causes, 4-5 debug, 6+ trace' -r
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand status" -s w -l watch -d 'Keep running and redraw when sites change (at most once a second)'
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand status" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand list" -s o -l output -d 'Output format' -r -f -a "table\t''
wide\t''
json\t''
yaml\t''
name\t''
jsonpath=\t''"
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand list" -s l -l selector -d 'Label selector, as kubectl (e.g. -l team=ml,region!=eu)' -r
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand list" -l tier -d 'Only sites of this tier' -r -f -a "critical\t''
standard\t''
non-critical\t''"
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand list" -l environment -d 'Only sites of this environment' -r -f -a "development\t''
staging\t''
production\t''
dr\t''"
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand list" -l region -d 'Only sites in this region' -r
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand list" -l phase -d 'Only sites in this phase' -r -f -a "Pending\t''
Connected\t''
Stale\t''
Unreachable\t''
Sleeping\t''"
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand list" -l version -d 'Only sites whose edge reports this version (as the footer\'s Edges: line names it; a leading v is ignored)' -r
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand list" -l incident -d 'Only the sites of this incident (xc-, cc- or go- id, as `kubectl fleet incidents` lists them)' -r
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand list" -l color -d 'Colour the phase column' -r -f -a "auto\t'Colour when stdout is a terminal and NO_COLOR is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand list" -l kubeconfig -d 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)' -r -F
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand list" -l context -d 'The kubeconfig context to use (default: the current context)' -r
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand list" -l request-timeout -d 'Give up on a request after this long, like kubectl (e.g. 10s, 1m); 0, the default, waits for a response without limit, but connecting still gives up after 30s' -r
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand list" -s v -l v -d 'Log detail on stderr, as kubectl\'s -v: 1-3 info and an error\'s causes, 4-5 debug, 6+ trace' -r
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand list" -s w -l watch -d 'Keep running and redraw when sites change (at most once a second)'
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand list" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand get" -s o -l output -d 'Output format' -r -f -a "table\t''
wide\t''
json\t''
yaml\t''
name\t''
jsonpath=\t''"
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand get" -s l -l selector -d 'Label selector, as kubectl (e.g. -l team=ml,region!=eu)' -r
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand get" -l tier -d 'Only sites of this tier' -r -f -a "critical\t''
standard\t''
non-critical\t''"
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand get" -l environment -d 'Only sites of this environment' -r -f -a "development\t''
staging\t''
production\t''
dr\t''"
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand get" -l region -d 'Only sites in this region' -r
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand get" -l phase -d 'Only sites in this phase' -r -f -a "Pending\t''
Connected\t''
Stale\t''
Unreachable\t''
Sleeping\t''"
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand get" -l version -d 'Only sites whose edge reports this version (as the footer\'s Edges: line names it; a leading v is ignored)' -r
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand get" -l incident -d 'Only the sites of this incident (xc-, cc- or go- id, as `kubectl fleet incidents` lists them)' -r
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand get" -l color -d 'Colour the phase column' -r -f -a "auto\t'Colour when stdout is a terminal and NO_COLOR is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand get" -l kubeconfig -d 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)' -r -F
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand get" -l context -d 'The kubeconfig context to use (default: the current context)' -r
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand get" -l request-timeout -d 'Give up on a request after this long, like kubectl (e.g. 10s, 1m); 0, the default, waits for a response without limit, but connecting still gives up after 30s' -r
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand get" -s v -l v -d 'Log detail on stderr, as kubectl\'s -v: 1-3 info and an error\'s causes, 4-5 debug, 6+ trace' -r
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand get" -s w -l watch -d 'Keep running and redraw when sites change (at most once a second)'
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand get" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand describe" -s o -l output -d 'Output format' -r -f -a "text\t'kubectl-describe style text'
json\t'The SiteDescription document as JSON'
yaml\t'The SiteDescription document as YAML'"
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand describe" -l kubeconfig -d 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)' -r -F
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand describe" -l context -d 'The kubeconfig context to use (default: the current context)' -r
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand describe" -l request-timeout -d 'Give up on a request after this long, like kubectl (e.g. 10s, 1m); 0, the default, waits for a response without limit, but connecting still gives up after 30s' -r
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand describe" -s v -l v -d 'Log detail on stderr, as kubectl\'s -v: 1-3 info and an error\'s causes, 4-5 debug, 6+ trace' -r
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand describe" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand describe" -s V -l version -d 'Print version'
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand policy" -l tier -d 'Only this tier' -r -f -a "critical\t''
standard\t''
non-critical\t''"
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand policy" -s o -l output -d 'Output format' -r -f -a "table\t'A table'
json\t'The PolicyReport document as JSON'
yaml\t'The PolicyReport document as YAML'"
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand policy" -l kubeconfig -d 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)' -r -F
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand policy" -l context -d 'The kubeconfig context to use (default: the current context)' -r
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand policy" -l request-timeout -d 'Give up on a request after this long, like kubectl (e.g. 10s, 1m); 0, the default, waits for a response without limit, but connecting still gives up after 30s' -r
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand policy" -s v -l v -d 'Log detail on stderr, as kubectl\'s -v: 1-3 info and an error\'s causes, 4-5 debug, 6+ trace' -r
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand policy" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand policy" -s V -l version -d 'Print version'
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand incidents" -s o -l output -d 'Output format' -r -f -a "table\t'Correlations, cascades and signals as tables'
json\t'The IncidentsReport document as JSON'
yaml\t'The IncidentsReport document as YAML'"
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand incidents" -s l -l selector -d 'Label selector limiting the sites whose signals are shown' -r
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand incidents" -l color -d 'Colour severities' -r -f -a "auto\t'Colour when stdout is a terminal and NO_COLOR is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand incidents" -l kubeconfig -d 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)' -r -F
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand incidents" -l context -d 'The kubeconfig context to use (default: the current context)' -r
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand incidents" -l request-timeout -d 'Give up on a request after this long, like kubectl (e.g. 10s, 1m); 0, the default, waits for a response without limit, but connecting still gives up after 30s' -r
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand incidents" -s v -l v -d 'Log detail on stderr, as kubectl\'s -v: 1-3 info and an error\'s causes, 4-5 debug, 6+ trace' -r
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand incidents" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand incidents" -s V -l version -d 'Print version'
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand cordon" -s l -l selector -d 'Every site whose labels match, as kubectl (e.g. -l federation.kubectl-fleet.dev/tier=critical, or a label of your inventory such as -l store-group=g1)' -r
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand cordon" -l region -d 'Every site in this region (its federation.kubectl-fleet.dev/region label); with -l, sites matching both' -r
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand cordon" -l for -d 'How long the window lasts from now, e.g. 2h, 1d (default 1h; at most 30d)' -r
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand cordon" -l until -d 'When the window ends, RFC 3339 with an offset, e.g. 2026-01-02T15:04:05Z (at most 30d ahead)' -r
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand cordon" -l reason -d 'Why, shown by describe, -o json and the REST API (at most 256 characters; "" clears it)' -r
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand cordon" -l kubeconfig -d 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)' -r -F
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand cordon" -l context -d 'The kubeconfig context to use (default: the current context)' -r
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand cordon" -l request-timeout -d 'Give up on a request after this long, like kubectl (e.g. 10s, 1m); 0, the default, waits for a response without limit, but connecting still gives up after 30s' -r
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand cordon" -s v -l v -d 'Log detail on stderr, as kubectl\'s -v: 1-3 info and an error\'s causes, 4-5 debug, 6+ trace' -r
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand cordon" -s y -l yes -d 'With -l/--region: do not ask for confirmation (required when stdin is not a terminal)'
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand cordon" -s h -l help -d 'Print help'
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand cordon" -s V -l version -d 'Print version'
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand uncordon" -s l -l selector -d 'Every site whose labels match, as kubectl (e.g. -l federation.kubectl-fleet.dev/tier=critical, or a label of your inventory such as -l store-group=g1)' -r
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand uncordon" -l region -d 'Every site in this region (its federation.kubectl-fleet.dev/region label); with -l, sites matching both' -r
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand uncordon" -l kubeconfig -d 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)' -r -F
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand uncordon" -l context -d 'The kubeconfig context to use (default: the current context)' -r
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand uncordon" -l request-timeout -d 'Give up on a request after this long, like kubectl (e.g. 10s, 1m); 0, the default, waits for a response without limit, but connecting still gives up after 30s' -r
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand uncordon" -s v -l v -d 'Log detail on stderr, as kubectl\'s -v: 1-3 info and an error\'s causes, 4-5 debug, 6+ trace' -r
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand uncordon" -s y -l yes -d 'With -l/--region: do not ask for confirmation (required when stdin is not a terminal)'
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand uncordon" -s h -l help -d 'Print help'
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand uncordon" -s V -l version -d 'Print version'
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand quarantine" -s l -l selector -d 'Every site whose labels match, as kubectl (e.g. -l federation.kubectl-fleet.dev/tier=critical, or a label of your inventory such as -l store-group=g1)' -r
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand quarantine" -l region -d 'Every site in this region (its federation.kubectl-fleet.dev/region label); with -l, sites matching both' -r
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand quarantine" -l reason -d 'Why, shown by describe, incidents, -o json and the REST API (at most 256 characters; "" clears it)' -r
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand quarantine" -l kubeconfig -d 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)' -r -F
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand quarantine" -l context -d 'The kubeconfig context to use (default: the current context)' -r
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand quarantine" -l request-timeout -d 'Give up on a request after this long, like kubectl (e.g. 10s, 1m); 0, the default, waits for a response without limit, but connecting still gives up after 30s' -r
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand quarantine" -s v -l v -d 'Log detail on stderr, as kubectl\'s -v: 1-3 info and an error\'s causes, 4-5 debug, 6+ trace' -r
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand quarantine" -s y -l yes -d 'With -l/--region: do not ask for confirmation (required when stdin is not a terminal)'
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand quarantine" -s h -l help -d 'Print help'
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand quarantine" -s V -l version -d 'Print version'
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand unquarantine" -s l -l selector -d 'Every site whose labels match, as kubectl (e.g. -l federation.kubectl-fleet.dev/tier=critical, or a label of your inventory such as -l store-group=g1)' -r
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand unquarantine" -l region -d 'Every site in this region (its federation.kubectl-fleet.dev/region label); with -l, sites matching both' -r
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand unquarantine" -l kubeconfig -d 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)' -r -F
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand unquarantine" -l context -d 'The kubeconfig context to use (default: the current context)' -r
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand unquarantine" -l request-timeout -d 'Give up on a request after this long, like kubectl (e.g. 10s, 1m); 0, the default, waits for a response without limit, but connecting still gives up after 30s' -r
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand unquarantine" -s v -l v -d 'Log detail on stderr, as kubectl\'s -v: 1-3 info and an error\'s causes, 4-5 debug, 6+ trace' -r
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand unquarantine" -s y -l yes -d 'With -l/--region: do not ask for confirmation (required when stdin is not a terminal)'
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand unquarantine" -s h -l help -d 'Print help'
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand unquarantine" -s V -l version -d 'Print version'
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand schedule" -s l -l selector -d 'Every site whose labels match, as kubectl (e.g. -l federation.kubectl-fleet.dev/tier=critical, or a label of your inventory such as -l store-group=g1)' -r
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand schedule" -l region -d 'Every site in this region (its federation.kubectl-fleet.dev/region label); with -l, sites matching both' -r
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand schedule" -l offline -d 'An offline window in --tz local time: HH:MM-HH:MM every day (e.g. 22:00-06:00) or "DAY HH:MM-DAY HH:MM" every week (e.g. "Sat 00:00-Mon 06:00"); repeat for more' -r
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand schedule" -l tz -d 'The IANA time zone of the --offline windows, e.g. Europe/Berlin' -r
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand schedule" -l absent-up-to -d 'The longest the site may be silent at any time, e.g. 36h or 7d (1m to 7d)' -r
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand schedule" -l kubeconfig -d 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)' -r -F
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand schedule" -l context -d 'The kubeconfig context to use (default: the current context)' -r
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand schedule" -l request-timeout -d 'Give up on a request after this long, like kubectl (e.g. 10s, 1m); 0, the default, waits for a response without limit, but connecting still gives up after 30s' -r
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand schedule" -s v -l v -d 'Log detail on stderr, as kubectl\'s -v: 1-3 info and an error\'s causes, 4-5 debug, 6+ trace' -r
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand schedule" -s y -l yes -d 'With -l/--region: do not ask for confirmation (required when stdin is not a terminal)'
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand schedule" -l clear -d 'Remove the schedule: the sites\' silence is judged as any other again'
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand schedule" -s h -l help -d 'Print help'
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand schedule" -s V -l version -d 'Print version'
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand install" -l role -d 'Which operator role to install' -r -f -a "hub\t'The hub: phases, correlation, FederationStatus, metrics, REST API'
edge\t'An edge: dials home and reports its own site\'s status'"
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand install" -l site -d 'Edge role: the site this cluster is registered as' -r
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand install" -l hub-kubeconfig -d 'Edge role: hub kubeconfig from `register` to include as Secret fleet-system/fleet-hub-kubeconfig' -r -F
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand install" -l image -d 'Operator container image [default: ghcr.io/kubectl-fleet/fleet-operator:v0.1.0]' -r
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand install" -l tls-secret -d 'Serve HTTPS with the certificate in this Secret of fleet-system (tls.crt, tls.key; the hub\'s also ca.crt, and it must name the hub\'s Service), not one install makes (hub) or a self-signed one (edge)' -r
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand install" -l kubeconfig -d 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)' -r -F
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand install" -l context -d 'The kubeconfig context to use (default: the current context)' -r
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand install" -l request-timeout -d 'Give up on a request after this long, like kubectl (e.g. 10s, 1m); 0, the default, waits for a response without limit, but connecting still gives up after 30s' -r
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand install" -s v -l v -d 'Log detail on stderr, as kubectl\'s -v: 1-3 info and an error\'s causes, 4-5 debug, 6+ trace' -r
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand install" -l apply -d 'Apply to the cluster (server-side apply) instead of printing'
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand install" -l force-conflicts -d 'With --apply: replace values someone changed on the cluster (kept by default)'
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand install" -s y -l yes -d 'With --role edge --apply: install even onto a cluster that is a fleet hub (asked on a terminal)'
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand install" -l crds-only -d 'Only the CustomResourceDefinitions'
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand install" -l with-monitoring -d 'Hub role: also a ServiceMonitor, the PrometheusRule alerts, the Grafana dashboard ConfigMap and a ClusterRole for Prometheus to read /metrics (needs the Prometheus Operator CRDs)'
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand install" -l with-cert-manager -d 'Hub role: have cert-manager make and renew the serving certificate instead of install (needs cert-manager\'s CRDs)'
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand install" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand install" -s V -l version -d 'Print version'
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand uninstall" -l role -d 'Remove only this role\'s operator (default: both, hub and edge)' -r -f -a "hub\t'The hub: phases, correlation, FederationStatus, metrics, REST API'
edge\t'An edge: dials home and reports its own site\'s status'"
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand uninstall" -l kubeconfig -d 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)' -r -F
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand uninstall" -l context -d 'The kubeconfig context to use (default: the current context)' -r
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand uninstall" -l request-timeout -d 'Give up on a request after this long, like kubectl (e.g. 10s, 1m); 0, the default, waits for a response without limit, but connecting still gives up after 30s' -r
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand uninstall" -s v -l v -d 'Log detail on stderr, as kubectl\'s -v: 1-3 info and an error\'s causes, 4-5 debug, 6+ trace' -r
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand uninstall" -l crds -d 'Also delete the CRDs, and with them every registered site'
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand uninstall" -s y -l yes -d 'Do not ask before removing the hub role from a fleet with sites, or deleting the CRDs (required then when stdin is not a terminal)'
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand uninstall" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand uninstall" -s V -l version -d 'Print version'
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand completion" -l kubeconfig -d 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)' -r -F
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand completion" -l context -d 'The kubeconfig context to use (default: the current context)' -r
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand completion" -l request-timeout -d 'Give up on a request after this long, like kubectl (e.g. 10s, 1m); 0, the default, waits for a response without limit, but connecting still gives up after 30s' -r
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand completion" -s v -l v -d 'Log detail on stderr, as kubectl\'s -v: 1-3 info and an error\'s causes, 4-5 debug, 6+ trace' -r
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand completion" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand completion" -s V -l version -d 'Print version'
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand version" -l kubeconfig -d 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)' -r -F
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand version" -l context -d 'The kubeconfig context to use (default: the current context)' -r
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand version" -l request-timeout -d 'Give up on a request after this long, like kubectl (e.g. 10s, 1m); 0, the default, waits for a response without limit, but connecting still gives up after 30s' -r
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand version" -s v -l v -d 'Log detail on stderr, as kubectl\'s -v: 1-3 info and an error\'s causes, 4-5 debug, 6+ trace' -r
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand version" -l short -d 'Print only the version number'
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand version" -s h -l help -d 'Print help'
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand version" -s V -l version -d 'Print version'
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand help; and not __fish_seen_subcommand_from register rotate unregister status describe policy incidents cordon uncordon quarantine unquarantine schedule install uninstall completion version help" -f -a "register" -d 'Register a site on the hub and print the edge\'s configuration'
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand help; and not __fish_seen_subcommand_from register rotate unregister status describe policy incidents cordon uncordon quarantine unquarantine schedule install uninstall completion version help" -f -a "rotate" -d 'Mint a fresh token for a site (optionally revoking all older ones)'
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand help; and not __fish_seen_subcommand_from register rotate unregister status describe policy incidents cordon uncordon quarantine unquarantine schedule install uninstall completion version help" -f -a "unregister" -d 'Remove everything `register` created for a site'
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand help; and not __fish_seen_subcommand_from register rotate unregister status describe policy incidents cordon uncordon quarantine unquarantine schedule install uninstall completion version help" -f -a "status" -d 'Show per-site and fleet-wide status'
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand help; and not __fish_seen_subcommand_from register rotate unregister status describe policy incidents cordon uncordon quarantine unquarantine schedule install uninstall completion version help" -f -a "describe" -d 'Show one site in full: conditions with reasons, inventory, signals and policy'
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand help; and not __fish_seen_subcommand_from register rotate unregister status describe policy incidents cordon uncordon quarantine unquarantine schedule install uninstall completion version help" -f -a "policy" -d 'Show the remediation policy per tier and severity'
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand help; and not __fish_seen_subcommand_from register rotate unregister status describe policy incidents cordon uncordon quarantine unquarantine schedule install uninstall completion version help" -f -a "incidents" -d 'Show active correlations, cascades and grouped outages, or one incident by its ID'
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand help; and not __fish_seen_subcommand_from register rotate unregister status describe policy incidents cordon uncordon quarantine unquarantine schedule install uninstall completion version help" -f -a "cordon" -d 'Put sites in maintenance until a time: still judged and shown, no per-site alerts'
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand help; and not __fish_seen_subcommand_from register rotate unregister status describe policy incidents cordon uncordon quarantine unquarantine schedule install uninstall completion version help" -f -a "uncordon" -d 'End sites\' maintenance windows now'
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand help; and not __fish_seen_subcommand_from register rotate unregister status describe policy incidents cordon uncordon quarantine unquarantine schedule install uninstall completion version help" -f -a "quarantine" -d 'Leave what sites report out of every fleet incident: still judged and shown'
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand help; and not __fish_seen_subcommand_from register rotate unregister status describe policy incidents cordon uncordon quarantine unquarantine schedule install uninstall completion version help" -f -a "unquarantine" -d 'Let sites\' signals count in fleet incidents again'
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand help; and not __fish_seen_subcommand_from register rotate unregister status describe policy incidents cordon uncordon quarantine unquarantine schedule install uninstall completion version help" -f -a "schedule" -d 'Say when sites are expected offline: silent inside it they are Sleeping and page nobody'
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand help; and not __fish_seen_subcommand_from register rotate unregister status describe policy incidents cordon uncordon quarantine unquarantine schedule install uninstall completion version help" -f -a "install" -d 'Print (or apply) the manifests for the CRDs and the operator'
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand help; and not __fish_seen_subcommand_from register rotate unregister status describe policy incidents cordon uncordon quarantine unquarantine schedule install uninstall completion version help" -f -a "uninstall" -d 'Remove the operator, its RBAC and monitoring objects (the CRDs and every site only with --crds)'
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand help; and not __fish_seen_subcommand_from register rotate unregister status describe policy incidents cordon uncordon quarantine unquarantine schedule install uninstall completion version help" -f -a "completion" -d 'Print a shell completion script'
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand help; and not __fish_seen_subcommand_from register rotate unregister status describe policy incidents cordon uncordon quarantine unquarantine schedule install uninstall completion version help" -f -a "version" -d 'Print the version'
complete -c kubectl-fleet -n "__fish_kubectl_fleet_using_subcommand help; and not __fish_seen_subcommand_from register rotate unregister status describe policy incidents cordon uncordon quarantine unquarantine schedule install uninstall completion version help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
