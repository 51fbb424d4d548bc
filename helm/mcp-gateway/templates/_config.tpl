{{/*
The gateway's config.yaml: .Values.config with the keys the chart manages set from the values
that also shape the pod (ports, mounted file paths, Redis, drain timings), so the two cannot drift.
*/}}
{{- define "mcp-gateway.config" -}}
{{- $cfg := deepCopy (.Values.config | default dict) }}
{{- $server := deepCopy ($cfg.server | default dict) }}
{{- $_ := set $server "listen" (printf ":%d" (int .Values.containerPorts.mcp)) }}
{{- $_ := set $server "drainDelay" (printf "%ds" (int .Values.drain.delaySeconds)) }}
{{- $_ := set $server "shutdownTimeout" (printf "%ds" (int .Values.drain.shutdownTimeoutSeconds)) }}
{{- $publicURL := include "mcp-gateway.publicURL" . }}
{{- if $publicURL }}
{{- $_ := set $server "publicURL" $publicURL }}
{{- end }}
{{- if .Values.tls.enabled }}
{{- $dir := include "mcp-gateway.tlsDir" . }}
{{- $_ := set $server "tls" (dict "certFile" (printf "%s/tls.crt" $dir) "keyFile" (printf "%s/tls.key" $dir)) }}
{{- end }}
{{- $_ := set $cfg "server" $server }}
{{- $admin := deepCopy ($cfg.admin | default dict) }}
{{- $_ := set $admin "listen" (printf ":%d" (int .Values.containerPorts.admin)) }}
{{- $_ := set $admin "token" (dict "file" (printf "%s/admin-token" (include "mcp-gateway.secretsDir" .))) }}
{{- $_ := set $cfg "admin" $admin }}
{{- $_ := set $cfg "mrtr" (include "mcp-gateway.mrtrConfig" . | fromYaml) }}
{{- /* The rest of config.redis (TLS files, an ACL user name, the key prefix, Sentinel or
Cluster addresses, timeouts) is the operator's. */}}
{{- $_ := set $cfg "redis" (mergeOverwrite (deepCopy ($cfg.redis | default dict)) (include "mcp-gateway.redisConfig" . | fromYaml)) }}
{{- if .Values.pins.lockFile }}
{{- $pins := deepCopy ($cfg.pins | default dict) }}
{{- $_ := set $pins "lockFile" "/etc/mcp-gateway/pins.yaml" }}
{{- $_ := set $cfg "pins" $pins }}
{{- end }}
{{- toYaml $cfg }}
{{- end }}

{{/* The mrtr section: every key read from its file under the secrets directory. */}}
{{- define "mcp-gateway.mrtrConfig" -}}
keys:
{{- range .Values.mrtr.keys }}
  - id: {{ .id | quote }}
    secret:
      file: {{ printf "%s/mrtr-%s" (include "mcp-gateway.secretsDir" $) .id | quote }}
{{- if .openOnly }}
    openOnly: true
{{- end }}
{{- end }}
ttl: {{ .Values.mrtr.ttl | quote }}
{{- end }}

{{/* The redis section; an empty url selects the in-memory store. */}}
{{- define "mcp-gateway.redisConfig" -}}
url: {{ include "mcp-gateway.redisURL" . | quote }}
{{- if include "mcp-gateway.redisHasPassword" . }}
password:
  file: {{ printf "%s/%s" (include "mcp-gateway.secretsDir" .) (include "mcp-gateway.redisPasswordFile" .) | quote }}
{{- end }}
{{- end }}
