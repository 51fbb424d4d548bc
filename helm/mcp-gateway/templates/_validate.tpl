{{/*
Rendering fails on combinations that would deploy a broken or unsafe gateway; every message
says what to change.
*/}}
{{- define "mcp-gateway.validate" -}}
{{- if not (kindIs "map" .Values.config) }}
{{- /* Every check below reads config: without it they would fail on a nil, naming nothing. */}}
{{- fail "\n\nmcp-gateway: invalid values:\n- config is not set (config: null removes the chart's defaults too): give the gateway's settings there, at least config.upstreams and config.auth" }}
{{- end }}
{{- $errs := list }}
{{- $fullname := include "mcp-gateway.fullname" . }}
{{- if not (regexMatch "^[a-z]([-a-z0-9]*[a-z0-9])?$" $fullname) }}
{{- $errs = append $errs (printf "the resources are named %q (from the release name, or fullnameOverride), which a Service cannot be named: lower-case letters, digits and '-' only, opening with a letter; set fullnameOverride to such a name" $fullname) }}
{{- end }}
{{- if and (not (include "mcp-gateway.sharedState" .)) (or (gt (int .Values.replicaCount) 1) .Values.autoscaling.enabled) }}
{{- $errs = append $errs "replicaCount > 1 or autoscaling.enabled needs shared state: set redis.url (external Redis) or redis.internal.enabled=true; the in-memory store serves one replica only" }}
{{- end }}
{{- if and .Values.redis.url .Values.redis.internal.enabled }}
{{- $errs = append $errs "set either redis.url or redis.internal.enabled, not both" }}
{{- end }}
{{- if and .Values.redis.password .Values.redis.existingSecret }}
{{- $errs = append $errs "set either redis.password or redis.existingSecret, not both" }}
{{- end }}
{{- $errs = concat $errs (include "mcp-gateway.validateKeys" . | fromYamlArray) }}
{{- $errs = concat $errs (include "mcp-gateway.validateManaged" . | fromYamlArray) }}
{{- $errs = concat $errs (include "mcp-gateway.validatePins" . | fromYamlArray) }}
{{- $errs = concat $errs (include "mcp-gateway.validatePDB" . | fromYamlArray) }}
{{- $errs = concat $errs (include "mcp-gateway.validateVolumes" . | fromYamlArray) }}
{{- $errs = concat $errs (include "mcp-gateway.validateClearSecrets" . | fromYamlArray) }}
{{- $errs = concat $errs (include "mcp-gateway.validateRequests" (list "resources" .Values.resources) | fromYamlArray) }}
{{- if .Values.redis.internal.enabled }}
{{- $errs = concat $errs (include "mcp-gateway.validateRequests" (list "redis.internal.resources" .Values.redis.internal.resources) | fromYamlArray) }}
{{- end }}
{{- with .Values.metrics.serviceMonitor }}
{{- if and .enabled .interval .scrapeTimeout (gt (include "mcp-gateway.durationMs" .scrapeTimeout | int64) (include "mcp-gateway.durationMs" .interval | int64)) }}
{{- $errs = append $errs (printf "metrics.serviceMonitor.scrapeTimeout %s is longer than metrics.serviceMonitor.interval %s, which Prometheus refuses (the gateway would not be scraped): shorten the timeout or lengthen the interval" .scrapeTimeout .interval) }}
{{- end }}
{{- end }}
{{- $sum := include "mcp-gateway.drainSum" . | int }}
{{- if le (include "mcp-gateway.terminationGracePeriodSeconds" . | int) $sum }}
{{- $errs = append $errs (printf "terminationGracePeriodSeconds must be larger than drain.preStopSleepSeconds + drain.delaySeconds + drain.shutdownTimeoutSeconds (%d), or Kubernetes kills in-flight requests" $sum) }}
{{- end }}
{{- if and .Values.autoscaling.enabled (not (or .Values.autoscaling.targetCPUUtilizationPercentage .Values.autoscaling.targetMemoryUtilizationPercentage)) }}
{{- $errs = append $errs "autoscaling.enabled needs targetCPUUtilizationPercentage or targetMemoryUtilizationPercentage" }}
{{- end }}
{{- if and .Values.autoscaling.enabled (gt (int .Values.autoscaling.minReplicas) (int .Values.autoscaling.maxReplicas)) }}
{{- $errs = append $errs "autoscaling.minReplicas is larger than autoscaling.maxReplicas" }}
{{- end }}
{{- if and (.Values.config.auth | default dict).disabled (not (has "--force" .Values.extraArgs)) }}
{{- $errs = append $errs "config.auth.disabled serves every request without a token; the gateway refuses that on a pod's listener unless extraArgs contains \"--force\" (development only)" }}
{{- end }}
{{- if not (.Values.config.upstreams | default list) }}
{{- $errs = append $errs "config.upstreams must list at least one backend ({name, url}); the gateway refuses to start without one" }}
{{- end }}
{{- $auth := .Values.config.auth | default dict }}
{{- if and (not $auth.disabled) (not $auth.issuers) }}
{{- $errs = append $errs "config.auth.issuers must name at least one token issuer (or set config.auth.disabled=true for development)" }}
{{- end }}
{{- if and (not $auth.disabled) (not (include "mcp-gateway.publicURL" .)) }}
{{- $errs = append $errs "with authentication the gateway needs its public URL (the token audience): set config.server.publicURL or an ingress host" }}
{{- end }}
{{- if (.Values.config.admin | default dict).pprof }}
{{- $errs = append $errs "config.admin.pprof: the gateway serves pprof on a loopback-only admin listener only, and the chart's admin port listens on every pod interface; profile a local gateway instead" }}
{{- end }}
{{- if eq (int .Values.containerPorts.mcp) (int .Values.containerPorts.admin) }}
{{- $errs = append $errs (printf "containerPorts.mcp and containerPorts.admin are both %d: the gateway binds its MCP and admin listeners on the pod's interfaces, and the second cannot take the port the first holds; give each its own port" (int .Values.containerPorts.mcp)) }}
{{- end }}
{{- if and .Values.networkPolicy.enabled (kindIs "slice" .Values.networkPolicy.egress) (not .Values.networkPolicy.egress) }}
{{- $errs = append $errs "networkPolicy.egress is an empty list, a policy that denies every connection the gateway makes (DNS, the token issuers, the backends, Redis): leave it null for no restriction, or list the rules" }}
{{- end }}
{{- $selector := include "mcp-gateway.selectorLabels" . | fromYaml }}
{{- range $key, $_ := .Values.podLabels }}
{{- if hasKey $selector $key }}
{{- $errs = append $errs (printf "podLabels.%s: the chart selects its pods by that label (the Deployment, Service, PodDisruptionBudget and NetworkPolicy would select none): leave it to the chart" $key) }}
{{- end }}
{{- end }}
{{- if and .Values.tls.enabled (not .Values.tls.secretName) }}
{{- $errs = append $errs "tls.enabled needs tls.secretName (a kubernetes.io/tls Secret)" }}
{{- end }}
{{- if $errs }}
{{- fail (printf "\n\nmcp-gateway: invalid values:\n- %s" (join "\n- " $errs)) }}
{{- end }}
{{- end }}

{{/* Problems with the MRTR keys and the chart's Secret, as a YAML list of messages. */}}
{{- define "mcp-gateway.validateKeys" -}}
{{- $errs := list }}
{{- $existing := .Values.secrets.existingSecret }}
{{- $withValue := 0 }}
{{- $sealing := 0 }}
{{- range .Values.mrtr.keys }}
{{- if not .openOnly }}
{{- $sealing = add1 $sealing }}
{{- end }}
{{- if .secret }}
{{- $withValue = add1 $withValue }}
{{- if lt (len .secret) 32 }}
{{- $errs = append $errs (printf "mrtr.keys[%s].secret is shorter than 32 characters; generate one with: head -c 32 /dev/urandom | base64" .id) }}
{{- end }}
{{- end }}
{{- end }}
{{- if and .Values.mrtr.keys (eq $sealing 0) }}
{{- $errs = append $errs "every entry of mrtr.keys is openOnly: one must seal (the newest without openOnly seals)" }}
{{- end }}
{{- if and (not $existing) (gt $withValue 0) (lt $withValue (len .Values.mrtr.keys)) }}
{{- $errs = append $errs "every entry of mrtr.keys needs a secret (or use secrets.existingSecret)" }}
{{- end }}
{{- if and (eq $withValue 0) (not $existing) }}
{{- $errs = append $errs "no MRTR key: set mrtr.keys to [{id: k1, secret: <head -c 32 /dev/urandom | base64>}] or secrets.existingSecret with one entry mrtr-<id> per key id listed in mrtr.keys" }}
{{- end }}
{{- if and (not $existing) (not .Values.adminToken) }}
{{- $errs = append $errs "no admin token: set adminToken (at least 32 characters: head -c 32 /dev/urandom | base64), the bearer /metrics, /pins and the detail of /readyz need on the pod's admin port, or put admin-token into secrets.existingSecret" }}
{{- end }}
{{- if and .Values.adminToken (lt (len .Values.adminToken) 32) }}
{{- $errs = append $errs "adminToken is shorter than 32 characters; generate one with: head -c 32 /dev/urandom | base64" }}
{{- end }}
{{- if and $existing .Values.adminToken }}
{{- $errs = append $errs "with secrets.existingSecret the chart creates no Secret: put adminToken into that Secret as admin-token" }}
{{- end }}
{{- if and $existing (not .Values.mrtr.keys) }}
{{- $errs = append $errs "secrets.existingSecret needs the MRTR key ids in mrtr.keys (for example [{id: k1}]), read from entries mrtr-<id> of that Secret" }}
{{- end }}
{{- if and $existing (or (gt $withValue 0) .Values.secrets.files) }}
{{- $errs = append $errs "with secrets.existingSecret the chart creates no Secret: move mrtr.keys[].secret and secrets.files into that Secret" }}
{{- end }}
{{- range $name, $_ := .Values.secrets.files }}
{{- if or (has $name (list "admin-token" "redis-password")) (hasPrefix "mrtr-" $name) }}
{{- $errs = append $errs (printf "secrets.files.%s: the chart writes that entry itself (admin-token from adminToken, redis-password from redis.password, mrtr-<id> from mrtr.keys): name the file otherwise" $name) }}
{{- end }}
{{- end }}
{{- if and $existing .Values.redis.password }}
{{- $errs = append $errs "with secrets.existingSecret put the Redis password into a Secret and set redis.existingSecret instead of redis.password" }}
{{- end }}
{{- toYaml $errs }}
{{- end }}

{{/* Keys of .Values.config that the chart sets itself, as a YAML list of messages. */}}
{{- define "mcp-gateway.validateManaged" -}}
{{- $errs := list }}
{{- $server := .Values.config.server | default dict }}
{{- $managed := dict "listen" "containerPorts.mcp" "tls" "tls.enabled and tls.secretName" "drainDelay" "drain.delaySeconds" "shutdownTimeout" "drain.shutdownTimeoutSeconds" }}
{{- range $key := keys $managed | sortAlpha }}
{{- if hasKey $server $key }}
{{- $errs = append $errs (printf "config.server.%s is set by the chart: use %s" $key (get $managed $key)) }}
{{- end }}
{{- end }}
{{- if hasKey (.Values.config.admin | default dict) "listen" }}
{{- $errs = append $errs "config.admin.listen is set by the chart: use containerPorts.admin" }}
{{- end }}
{{- if hasKey (.Values.config.admin | default dict) "token" }}
{{- $errs = append $errs "config.admin.token is set by the chart: use adminToken (or admin-token in secrets.existingSecret)" }}
{{- end }}
{{- if hasKey .Values.config "mrtr" }}
{{- $errs = append $errs "config.mrtr is set by the chart: use mrtr.keys and mrtr.ttl" }}
{{- end }}
{{- $redisCfg := .Values.config.redis | default dict }}
{{- range $key := list "url" "password" }}
{{- if hasKey $redisCfg $key }}
{{- $errs = append $errs (printf "config.redis.%s is set by the chart: use redis.%s (or redis.internal)" $key (ternary "url" "password or redis.existingSecret" (eq $key "url"))) }}
{{- end }}
{{- end }}
{{- if and $redisCfg.addrs (or .Values.redis.url .Values.redis.internal.enabled) }}
{{- $errs = append $errs "config.redis.addrs names the Redis servers (Sentinel or Cluster) instead of redis.url or redis.internal.enabled: set one of them" }}
{{- end }}
{{- /* The same settings through the command line or the environment, which override
config.yaml: a flag with one or two dashes, its value after '=' or next, or an MCPGW_* variable. */}}
{{- $uses := dict "listen" "containerPorts.mcp" "admin-listen" "containerPorts.admin" "config" "config (the chart writes the file)" }}
{{- range .Values.extraArgs }}
{{- $flag := regexFind "^--?(listen|admin-listen|config)(=|$)" (toString .) | trimSuffix "=" }}
{{- if $flag }}
{{- $errs = append $errs (printf "extraArgs %s is set by the chart: use %s" $flag (get $uses (trimPrefix "-" (trimPrefix "-" $flag)))) }}
{{- end }}
{{- end }}
{{- $vars := dict "MCPGW_LISTEN" "containerPorts.mcp" "MCPGW_ADMIN_LISTEN" "containerPorts.admin" "MCPGW_CONFIG" "config (the chart writes the file)" }}
{{- range .Values.extraEnv }}
{{- if hasKey $vars (toString .name) }}
{{- $errs = append $errs (printf "extraEnv %s is set by the chart: use %s" .name (get $vars .name)) }}
{{- end }}
{{- end }}
{{- toYaml $errs }}
{{- end }}

{{/*
Problems with pins.lockFile, as a YAML list of messages: the gateway refuses to start when the
lock file has no section for a backend pinned from it (config.pins mode lockfile, the default),
and the pods would crash-loop on a render that check-config --static, which reads no files,
accepts.
*/}}
{{- define "mcp-gateway.validatePins" -}}
{{- $errs := list }}
{{- with .Values.pins.lockFile }}
{{- $lock := fromYaml . }}
{{- if hasKey $lock "Error" }}
{{- $errs = append $errs "pins.lockFile is not the YAML gateway pins write writes" }}
{{- else }}
{{- $pins := $.Values.config.pins | default dict }}
{{- $sections := $lock.backends | default dict }}
{{- range $.Values.config.upstreams | default list }}
{{- $mode := $pins.mode | default "lockfile" }}
{{- with index ($pins.backends | default dict) .name }}{{ with .mode }}{{ $mode = . }}{{ end }}{{ end }}
{{- if and (eq $mode "lockfile") (not (hasKey $sections .name)) }}
{{- $errs = append $errs (printf "pins.lockFile has no section for backend %q, which is pinned from it: run gateway pins write with this backend configured, or set config.pins.backends.%s.mode" .name .name) }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}
{{- toYaml $errs }}
{{- end }}

{{/*
Problems with the PodDisruptionBudget, as a YAML list of messages: a count or a percentage
("50%"), as the API server takes them, and one that lets at least one pod be evicted at the
fewest replicas the release runs (replicaCount, or autoscaling.minReplicas): one that lets none
go makes every kubectl drain and node upgrade wait for ever. Kubernetes rounds a percentage of
minAvailable up, and one of maxUnavailable up too.
*/}}
{{- define "mcp-gateway.validatePDB" -}}
{{- $errs := list }}
{{- $pdb := .Values.podDisruptionBudget }}
{{- $floor := int (ternary .Values.autoscaling.minReplicas .Values.replicaCount .Values.autoscaling.enabled) }}
{{- $key := ternary "minAvailable" "maxUnavailable" (not (kindIs "invalid" $pdb.minAvailable)) }}
{{- $v := get $pdb $key }}
{{- if and $pdb.enabled (gt $floor 0) (not (kindIs "invalid" $v)) }}
{{- $n := 0 }}
{{- $ok := true }}
{{- if kindIs "string" $v }}
{{- if regexMatch "^[0-9]+%$" $v }}
{{- $pct := trimSuffix "%" $v | int }}
{{- $n = div (add (mul $pct $floor) 99) 100 }}
{{- if gt $pct 100 }}
{{- $ok = false }}
{{- $errs = append $errs (printf "podDisruptionBudget.%s %q: a percentage is at most 100%%" $key $v) }}
{{- end }}
{{- else }}
{{- $ok = false }}
{{- $errs = append $errs (printf "podDisruptionBudget.%s %q: give a number of pods or a percentage such as \"50%%\"" $key $v) }}
{{- end }}
{{- else }}
{{- $n = int $v }}
{{- end }}
{{- if and $ok (or (and (eq $key "minAvailable") (ge (int $n) $floor)) (and (eq $key "maxUnavailable") (le (int $n) 0))) }}
{{- $errs = append $errs (printf "podDisruptionBudget lets no pod of %d be evicted (%s %v), so every kubectl drain and node upgrade would wait for ever: lower minAvailable below the replicas (or set maxUnavailable to at least 1), run more replicas, or set podDisruptionBudget.enabled=false" $floor $key $v) }}
{{- end }}
{{- end }}
{{- toYaml $errs }}
{{- end }}

{{/*
Milliseconds of a Prometheus duration ("1m30s", "1d", "500ms"; the values schema holds the
syntax): the sum of its parts.
*/}}
{{- define "mcp-gateway.durationMs" -}}
{{- $units := dict "ms" 1 "s" 1000 "m" 60000 "h" 3600000 "d" 86400000 "w" 604800000 "y" 31536000000 }}
{{- $ms := 0 }}
{{- range regexFindAll "[0-9]+(ms|[ywdhms])" (toString .) -1 }}
{{- $unit := regexFind "(ms|[ywdhms])$" . }}
{{- $ms = add $ms (mul (trimSuffix $unit . | int64) (get $units $unit)) }}
{{- end }}
{{- $ms }}
{{- end }}

{{/*
Problems with extraVolumes and extraVolumeMounts, as a YAML list of messages: a volume named as
one of the chart's, or a mount where the chart mounts (the API server refuses a pod with either
twice) or inside its read-only secrets or TLS volume (the container would not start).
*/}}
{{- define "mcp-gateway.validateVolumes" -}}
{{- $errs := list }}
{{- $names := list "config" "secrets" "tmp" }}
{{- $files := list "/etc/mcp-gateway/config.yaml" "/tmp" }}
{{- $dirs := list (include "mcp-gateway.secretsDir" .) }}
{{- if .Values.tls.enabled }}
{{- $names = append $names "tls" }}
{{- $dirs = append $dirs (include "mcp-gateway.tlsDir" .) }}
{{- end }}
{{- if .Values.pins.lockFile }}
{{- $files = append $files "/etc/mcp-gateway/pins.yaml" }}
{{- end }}
{{- range .Values.extraVolumes }}
{{- if has (toString .name) $names }}
{{- $errs = append $errs (printf "extraVolumes: %s is the name of a volume of the chart (%s): name yours otherwise" .name (join ", " $names)) }}
{{- end }}
{{- end }}
{{- range .Values.extraVolumeMounts }}
{{- $path := toString .mountPath }}
{{- $clean := trimSuffix "/" $path }}
{{- $taken := has $clean $files }}
{{- range $dirs }}
{{- if or (eq $clean .) (hasPrefix (printf "%s/" .) $clean) }}
{{- $taken = true }}
{{- end }}
{{- end }}
{{- if $taken }}
{{- $errs = append $errs (printf "extraVolumeMounts: %s is where the chart mounts its own volumes (%s) or inside one it mounts read-only (%s): mount yours elsewhere, and give secret files through secrets.files or secrets.existingSecret" $path (join ", " $files) (join ", " $dirs)) }}
{{- end }}
{{- end }}
{{- toYaml $errs }}
{{- end }}

{{/*
Problems with one resources block, given as (list PATH RESOURCES), as a YAML list of messages: a
CPU or memory request above its limit, which the API server refuses. A quantity the chart cannot
read (an exponent) is left to the API server.
*/}}
{{- define "mcp-gateway.validateRequests" -}}
{{- $errs := list }}
{{- $path := index . 0 }}
{{- $res := index . 1 | default dict }}
{{- range $name := list "cpu" "memory" }}
{{- $req := dig "requests" $name "" $res | toString }}
{{- $lim := dig "limits" $name "" $res | toString }}
{{- $r := include "mcp-gateway.milli" $req }}
{{- $l := include "mcp-gateway.milli" $lim }}
{{- if and $r $l (gt (float64 $r) (float64 $l)) }}
{{- $errs = append $errs (printf "%s.requests.%s %s is more than %s.limits.%s %s, which the API server refuses: raise the limit with the request" $path $name $req $path $name $lim) }}
{{- end }}
{{- end }}
{{- toYaml $errs }}
{{- end }}

{{/* A Kubernetes quantity ("500m", "1.5", "256Mi", "1G") in thousandths of its unit, or nothing. */}}
{{- define "mcp-gateway.milli" -}}
{{- $units := dict "m" 1 "" 1000 "k" 1e6 "M" 1e9 "G" 1e12 "T" 1e15 "Ki" 1024e3 "Mi" 1048576e3 "Gi" 1073741824e3 "Ti" 1099511627776e3 }}
{{- $num := regexFind "^[0-9]+(\\.[0-9]+)?" . }}
{{- $suffix := trimPrefix $num . }}
{{- if and $num (hasKey $units $suffix) }}
{{- mulf (float64 $num) (get $units $suffix) | printf "%.0f" }}
{{- end }}
{{- end }}

{{/*
Secrets the chart would write in clear outside a Secret, in two shapes:
- a URL with a password in its user information: the gateway takes one (a backend's or an
  interceptor's as Basic authorization, Redis's as its AUTH), but config.yaml is a ConfigMap,
  which more people and tools may read than a Secret. Every string of config is looked at,
  whatever key holds it, and redis.url.
- a variable config reads a secret from ({env: NAME}) given a literal value in extraEnv, which
  puts the secret into the Deployment's pod template.
- a secret of config given inline ({value: ...}, the gateway's form for development), which
  config.yaml would hold in clear.
The messages name where, never the value.
*/}}
{{- define "mcp-gateway.validateClearSecrets" -}}
{{- $errs := list }}
{{- if include "mcp-gateway.secretScan" (list "redis.url" .Values.redis.url) }}
{{- $errs = append $errs "redis.url carries a password in its user information, which would be written in clear into the ConfigMap: give it as redis.password or redis.existingSecret (a user name may stay in the URL)" }}
{{- end }}
{{- $envRefs := dict }}
{{- range include "mcp-gateway.secretScan" (list "config" .Values.config) | splitList "\n" | compact }}
{{- $f := splitList " " . }}
{{- if eq (index $f 0) "value" }}
{{- $errs = append $errs (printf "%s gives a secret inline, which would be written in clear into the ConfigMap: use {file: %s/<name>} with the file from secrets.files or secrets.existingSecret" (index $f 1) (include "mcp-gateway.secretsDir" $)) }}
{{- else if eq (index $f 0) "url" }}
{{- $errs = append $errs (printf "%s is a URL with a password in its user information, which would be written in clear into the ConfigMap: leave the user information out and send the credentials from a secret file instead, e.g. headers: {Authorization: {file: %s/<name>}} with \"Basic <base64 of user:password>\" in secrets.files or secrets.existingSecret" (index $f 1) (include "mcp-gateway.secretsDir" $)) }}
{{- else }}
{{- $_ := set $envRefs (index $f 1) (index $f 2) }}
{{- end }}
{{- end }}
{{- /* A backend given by --upstream NAME=URL or MCPGW_UPSTREAMS, a public URL by flag or variable:
a URL with a password anywhere in an argument or a literal variable lands in the Deployment. */}}
{{- $urlPassword := "[A-Za-z][A-Za-z0-9+.-]*://[^/?#@\\s,=]*:[^/?#\\s,]*@" }}
{{- range $i, $arg := .Values.extraArgs }}
{{- if regexMatch $urlPassword (toString $arg) }}
{{- $errs = append $errs (printf "extraArgs[%d] holds a URL with a password in its user information, which would be written in clear into the Deployment: give the backend in config.upstreams with its credentials from a secret file" $i) }}
{{- end }}
{{- end }}
{{- range .Values.extraEnv }}
{{- if and (hasKey . "value") (regexMatch $urlPassword (toString .value)) }}
{{- $errs = append $errs (printf "extraEnv %s holds a URL with a password in its user information, which would be written in clear into the Deployment: give the backend in config.upstreams with its credentials from a secret file, or the variable with valueFrom.secretKeyRef" .name) }}
{{- end }}
{{- end }}
{{- range .Values.extraEnv }}
{{- if and (hasKey $envRefs (toString .name)) (hasKey . "value") }}
{{- $errs = append $errs (printf "extraEnv %s: %s reads a secret from it, and a literal value would be written in clear into the Deployment: give it with valueFrom.secretKeyRef, or read the secret from a file of secrets.files or secrets.existingSecret" .name (get $envRefs (toString .name))) }}
{{- end }}
{{- end }}
{{- toYaml $errs }}
{{- end }}

{{/*
The secrets under (list path value), one a line: "url <path>" for a string that is a URL with a
password in its user information (as url.Parse reads it: the authority runs to the first "/",
"?" or "#", the user information to its last "@"), "env <NAME> <path>" for a secret read from a
variable ({env: NAME}, beside no key but file and value), "value <path>" for a secret given inline.
*/}}
{{- define "mcp-gateway.secretScan" -}}
{{- $path := index . 0 }}
{{- $v := index . 1 }}
{{- if and (kindIs "map" $v) (hasKey $v "value") (not (omit $v "env" "file" "value")) }}
{{- printf "value %s.value\n" $path }}
{{- else if and (kindIs "map" $v) (kindIs "string" $v.env) (not (omit $v "env" "file" "value")) }}
{{- printf "env %s %s.env\n" $v.env $path }}
{{- else if kindIs "map" $v }}
{{- range $k, $x := $v }}
{{- include "mcp-gateway.secretScan" (list (printf "%s.%s" $path $k) $x) }}
{{- end }}
{{- else if kindIs "slice" $v }}
{{- range $i, $x := $v }}
{{- include "mcp-gateway.secretScan" (list (printf "%s[%d]" $path $i) $x) }}
{{- end }}
{{- else if and (kindIs "string" $v) (regexMatch "^[A-Za-z][A-Za-z0-9+.-]*://[^/?#@]*:[^/?#]*@" $v) }}
{{- printf "url %s\n" $path }}
{{- end }}
{{- end }}
