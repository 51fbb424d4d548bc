{{/* Chart name, truncated to the 63 characters Kubernetes allows in names and labels. */}}
{{- define "mcp-gateway.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Fully qualified app name; the release name alone when it already contains the chart name. */}}
{{- define "mcp-gateway.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/*
Name of the in-chart Redis's Deployment, Service and NetworkPolicy: the full name cut so that
with "-redis" it stays within the 63 characters of a Service name, which is also the host name
the gateway dials.
*/}}
{{- define "mcp-gateway.redisName" -}}
{{- printf "%s-redis" (include "mcp-gateway.fullname" . | trunc 57 | trimSuffix "-") }}
{{- end }}

{{/*
Name of the admin Service (health, readiness, metrics): the full name cut so that with "-admin"
it stays within the 63 characters of a Service name.
*/}}
{{- define "mcp-gateway.adminServiceName" -}}
{{- printf "%s-admin" (include "mcp-gateway.fullname" . | trunc 57 | trimSuffix "-") }}
{{- end }}

{{/* The label that sets the admin Service apart from the MCP one, for the ServiceMonitor. */}}
{{- define "mcp-gateway.adminServiceLabel" -}}
mcp-gateway/service: admin
{{- end }}

{{/* Chart name and version for the helm.sh/chart label. */}}
{{- define "mcp-gateway.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Labels on every resource, without the component. */}}
{{- define "mcp-gateway.commonLabels" -}}
helm.sh/chart: {{ include "mcp-gateway.chart" . }}
app.kubernetes.io/name: {{ include "mcp-gateway.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: mcp-gateway
{{- end }}

{{/* Labels of the gateway's resources. */}}
{{- define "mcp-gateway.labels" -}}
{{ include "mcp-gateway.commonLabels" . }}
app.kubernetes.io/component: gateway
{{- end }}

{{/* Labels of the in-chart Redis. */}}
{{- define "mcp-gateway.redisLabels" -}}
{{ include "mcp-gateway.commonLabels" . }}
app.kubernetes.io/component: redis
{{- end }}

{{/* Selector labels of the gateway pods; never change them, Deployment selectors are immutable. */}}
{{- define "mcp-gateway.selectorLabels" -}}
app.kubernetes.io/name: {{ include "mcp-gateway.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: gateway
{{- end }}

{{/* Selector labels of the in-chart Redis. */}}
{{- define "mcp-gateway.redisSelectorLabels" -}}
app.kubernetes.io/name: {{ include "mcp-gateway.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: redis
{{- end }}

{{/* Name of the ServiceAccount. */}}
{{- define "mcp-gateway.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "mcp-gateway.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* Name of the Secret mounted at /etc/mcp-gateway/secrets/. */}}
{{- define "mcp-gateway.secretName" -}}
{{- default (include "mcp-gateway.fullname" .) .Values.secrets.existingSecret }}
{{- end }}

{{/* Image reference; a digest pins the image. */}}
{{- define "mcp-gateway.image" -}}
{{- if .Values.image.digest }}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}
{{- end }}

{{/* Directory of the mounted secrets and config. */}}
{{- define "mcp-gateway.secretsDir" -}}/etc/mcp-gateway/secrets{{- end }}
{{- define "mcp-gateway.tlsDir" -}}/etc/mcp-gateway/tls{{- end }}

{{/* Redis URL the gateway uses: external, in-chart, or empty (in-memory store). */}}
{{- define "mcp-gateway.redisURL" -}}
{{- if .Values.redis.url }}
{{- .Values.redis.url }}
{{- else if .Values.redis.internal.enabled }}
{{- printf "redis://%s:6379/0" (include "mcp-gateway.redisName" .) }}
{{- end }}
{{- end }}

{{/* "true" when state is shared in Redis: a Redis URL (redisURL), or the operator's
config.redis.addrs (Sentinel or Cluster); empty for the in-memory store of one replica. */}}
{{- define "mcp-gateway.sharedState" -}}
{{- if or (include "mcp-gateway.redisURL" .) (.Values.config.redis | default dict).addrs }}true{{- end }}
{{- end }}

{{/* "true" when a Redis password is configured. */}}
{{- define "mcp-gateway.redisHasPassword" -}}
{{- if or .Values.redis.password .Values.redis.existingSecret }}true{{- end }}
{{- end }}

{{/* Secret and key holding the Redis password, as "name/key". */}}
{{- define "mcp-gateway.redisPasswordRef" -}}
{{- if .Values.redis.existingSecret }}
{{- printf "%s/%s" .Values.redis.existingSecret .Values.redis.existingSecretKey }}
{{- else }}
{{- printf "%s/redis-password" (include "mcp-gateway.fullname" .) }}
{{- end }}
{{- end }}

{{/*
File name of the Redis password under the secrets directory. A password in the main existing
Secret is read under its own key; one in a separate Secret is projected as redis-password.
*/}}
{{- define "mcp-gateway.redisPasswordFile" -}}
{{- if and .Values.redis.existingSecret (eq .Values.redis.existingSecret .Values.secrets.existingSecret) }}
{{- .Values.redis.existingSecretKey }}
{{- else }}redis-password{{- end }}
{{- end }}

{{/* Public URL: config.server.publicURL, else https://<first Ingress host><path>. */}}
{{- define "mcp-gateway.publicURL" -}}
{{- $server := .Values.config.server | default dict }}
{{- if $server.publicURL }}
{{- $server.publicURL }}
{{- else if and .Values.ingress.enabled .Values.ingress.hosts }}
{{- printf "https://%s%s" (first .Values.ingress.hosts).host (default "/mcp" $server.path) }}
{{- end }}
{{- end }}

{{/* Grace period: explicit, or preStop + drain delay + shutdown timeout + a 5s margin. */}}
{{- define "mcp-gateway.drainSum" -}}
{{- add .Values.drain.preStopSleepSeconds .Values.drain.delaySeconds .Values.drain.shutdownTimeoutSeconds }}
{{- end }}
{{- define "mcp-gateway.terminationGracePeriodSeconds" -}}
{{- if kindIs "invalid" .Values.terminationGracePeriodSeconds }}
{{- add (include "mcp-gateway.drainSum" . | int) 5 }}
{{- else }}
{{- .Values.terminationGracePeriodSeconds | int }}
{{- end }}
{{- end }}

{{/* ingress-nginx body limit in MiB: one above maxBodyBytes so the gateway answers with its own 413. */}}
{{- define "mcp-gateway.nginxBodySize" -}}
{{- $max := (.Values.config.server | default dict).maxBodyBytes | default 4194304 | int64 }}
{{- printf "%dm" (add1 (div (add $max 1048575) 1048576)) }}
{{- end }}

{{/* topologySpreadConstraints: the explicit list, else one soft constraint per topology key. */}}
{{- define "mcp-gateway.topologySpread" -}}
{{- if .Values.topologySpreadConstraints -}}
topologySpreadConstraints:
  {{- toYaml .Values.topologySpreadConstraints | nindent 2 }}
{{- else if .Values.topologySpread.enabled -}}
topologySpreadConstraints:
{{- range .Values.topologySpread.topologyKeys }}
  - maxSkew: {{ $.Values.topologySpread.maxSkew }}
    topologyKey: {{ . }}
    whenUnsatisfiable: {{ $.Values.topologySpread.whenUnsatisfiable }}
    labelSelector:
      matchLabels:
        {{- include "mcp-gateway.selectorLabels" $ | nindent 8 }}
    # Count only the pods of the current revision, so a rollout spreads the new pods too.
    matchLabelKeys:
      - pod-template-hash
{{- end }}
{{- end }}
{{- end }}

{{/*
GOMEMLIMIT for the gateway: goMemLimit when set ("off" sets none), else goMemLimitPercent of
resources.limits.memory in bytes, else nothing. A limit the chart cannot read (a fraction, an
exponent) fails the render rather than being guessed.
*/}}
{{- define "mcp-gateway.goMemLimit" -}}
{{- if .Values.goMemLimit -}}
{{- if ne (toString .Values.goMemLimit) "off" -}}{{- .Values.goMemLimit -}}{{- end -}}
{{- else -}}
{{- $mem := dig "limits" "memory" "" (.Values.resources | default dict) -}}
{{- if kindIs "float64" $mem -}}{{- $mem = printf "%d" (int64 $mem) -}}{{- end -}}
{{- $mem = toString $mem -}}
{{- if $mem -}}
{{- $units := dict "" 1 "k" 1000 "M" 1000000 "G" 1000000000 "T" 1000000000000 "Ki" 1024 "Mi" 1048576 "Gi" 1073741824 "Ti" 1099511627776 -}}
{{- $num := regexFind "^[0-9]+" $mem -}}
{{- $suffix := trimPrefix $num $mem -}}
{{- if or (not $num) (not (hasKey $units $suffix)) -}}
{{- fail (printf "resources.limits.memory %q: cannot derive GOMEMLIMIT from it; set goMemLimit" $mem) -}}
{{- end -}}
{{- div (mul (int64 $num) (int64 (get $units $suffix)) (int64 .Values.goMemLimitPercent)) 100 -}}
{{- end -}}
{{- end -}}
{{- end -}}
