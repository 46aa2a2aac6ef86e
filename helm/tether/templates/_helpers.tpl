{{/* Names, labels and the checks that values.schema.json cannot express. */}}

{{/* "true" when a value is present: neither null nor the empty string. */}}
{{- define "tether.isSet" -}}
{{- if not (or (kindIs "invalid" .) (eq (toString .) "")) -}}true{{- end -}}
{{- end -}}

{{- define "tether.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "tether.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "tether.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "tether.selectorLabels" -}}
app.kubernetes.io/name: {{ include "tether.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "tether.labels" -}}
helm.sh/chart: {{ include "tether.chart" . }}
{{ include "tether.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/component: server
{{- end -}}

{{- define "tether.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "tether.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "tether.image" -}}
{{- if .Values.image.digest -}}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest -}}
{{- else -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}
{{- end -}}

{{/* Whole seconds of the drain budget, rounded up. */}}
{{- define "tether.drainSeconds" -}}
{{- $ms := int .Values.server.drainTimeoutMs -}}
{{- div (add $ms 999) 1000 -}}
{{- end -}}

{{/*
The kubelet's budget for a terminating pod covers the preStop pause, then the drain after
SIGTERM; the margin leaves room for closing Redis and flushing logs (docs/adr/0302).
*/}}
{{- define "tether.terminationGracePeriodSeconds" -}}
{{- $needed := add (int .Values.shutdown.preStopSleepSeconds) (int (include "tether.drainSeconds" .)) -}}
{{- $set := .Values.shutdown.terminationGracePeriodSeconds -}}
{{- if not (include "tether.isSet" $set) -}}
{{- add $needed (int .Values.shutdown.marginSeconds) -}}
{{- else if le (int $set) $needed -}}
{{- fail (printf "shutdown.terminationGracePeriodSeconds (%d) must exceed preStopSleepSeconds + ceil(server.drainTimeoutMs / 1000) = %d, or the kubelet kills in-flight turns" (int $set) $needed) -}}
{{- else -}}
{{- int $set -}}
{{- end -}}
{{- end -}}

{{/*
Where the Redis URL and password come from: a Secret of yours (it wins over inline values, so the
default URL needs no blanking), the chart's Secret, or nowhere. A cluster takes no URL.
*/}}
{{- define "tether.redisUrlSource" -}}
{{- if or (ne .Values.store.type "redis") (ne .Values.redis.mode "standalone") -}}none
{{- else if .Values.redis.existingSecret -}}existing
{{- else if .Values.redis.url -}}chart
{{- else -}}none
{{- end -}}
{{- end -}}

{{- define "tether.redisPasswordSource" -}}
{{- if ne .Values.store.type "redis" -}}none
{{- else if .Values.redis.existingSecret -}}existing
{{- else if .Values.redis.password -}}chart
{{- else -}}none
{{- end -}}
{{- end -}}

{{/* The Sentinels' own password (redis.mode=sentinel): your Secret, the chart's, or none. */}}
{{- define "tether.redisSentinelPasswordSource" -}}
{{- if or (ne .Values.store.type "redis") (ne .Values.redis.mode "sentinel") -}}none
{{- else if .Values.redis.existingSecret -}}existing
{{- else if .Values.redis.sentinelPassword -}}chart
{{- else -}}none
{{- end -}}
{{- end -}}

{{- define "tether.apiKeysSource" -}}
{{- if .Values.auth.apiKeys -}}chart
{{- else if .Values.auth.existingSecret -}}existing
{{- else -}}none
{{- end -}}
{{- end -}}

{{- define "tether.providerKeySource" -}}
{{- if eq .Values.provider.name "scripted" -}}none
{{- else if .Values.provider.existingSecret -}}existing
{{- else if .Values.provider.apiKey -}}chart
{{- else -}}none
{{- end -}}
{{- end -}}

{{/* The provider's key variable the server reads: TETHER_OPENAI_API_KEY or TETHER_ANTHROPIC_API_KEY. */}}
{{- define "tether.providerPrefix" -}}
{{- printf "TETHER_%s" (upper .Values.provider.name) -}}
{{- end -}}

{{/* TETHER_API_KEYS form: key=tenant pairs joined by commas. */}}
{{- define "tether.apiKeysValue" -}}
{{- $pairs := list -}}
{{- range .Values.auth.apiKeys -}}
{{- $pairs = append $pairs (printf "%s=%s" .key .tenant) -}}
{{- end -}}
{{- join "," $pairs -}}
{{- end -}}

{{/* True when the chart renders a Secret of its own. */}}
{{- define "tether.chartSecret" -}}
{{- $sources := list (include "tether.redisUrlSource" .) (include "tether.redisPasswordSource" .) (include "tether.redisSentinelPasswordSource" .) (include "tether.apiKeysSource" .) (include "tether.providerKeySource" .) -}}
{{- if has "chart" $sources -}}true{{- end -}}
{{- end -}}

{{/* Cross-field rules; each failure names the values to change. */}}
{{- define "tether.validate" -}}
{{- $v := .Values -}}
{{- if eq $v.store.type "memory" -}}
{{- if or (gt (int $v.replicaCount) 1) $v.autoscaling.enabled -}}
{{- fail "store.type=memory keeps state inside one process: set replicaCount=1 and autoscaling.enabled=false, or use store.type=redis" -}}
{{- end -}}
{{- else -}}
{{- if eq $v.redis.mode "standalone" -}}
{{- if and (not $v.redis.url) (not $v.redis.existingSecret) -}}
{{- fail "redis.mode=standalone needs redis.url (redis://host:6379/0) or redis.existingSecret holding it" -}}
{{- end -}}
{{- if $v.redis.clusterNodes -}}
{{- fail "redis.clusterNodes is for redis.mode=cluster; with standalone set redis.url" -}}
{{- end -}}
{{- else if eq $v.redis.mode "cluster" -}}
{{- if not $v.redis.clusterNodes -}}
{{- fail "redis.mode=cluster needs redis.clusterNodes (host:port seed nodes)" -}}
{{- end -}}
{{- else -}}
{{- if or (not $v.redis.sentinels) (not $v.redis.sentinelMaster) -}}
{{- fail "redis.mode=sentinel needs redis.sentinels (host:port each) and redis.sentinelMaster" -}}
{{- end -}}
{{- if $v.redis.clusterNodes -}}
{{- fail "redis.clusterNodes is for redis.mode=cluster; with sentinel set redis.sentinels" -}}
{{- end -}}
{{- end -}}
{{- if and $v.redis.sentinels (ne $v.redis.mode "sentinel") -}}
{{- fail "redis.sentinels is for redis.mode=sentinel" -}}
{{- end -}}
{{- if and (eq $v.redis.durability "replicated") (ge (int $v.redis.waitTimeoutMs) (int $v.redis.commandTimeoutMs)) -}}
{{- fail "redis.waitTimeoutMs must be less than redis.commandTimeoutMs with redis.durability=replicated" -}}
{{- end -}}
{{- end -}}
{{- if and $v.auth.apiKeys $v.auth.existingSecret -}}
{{- fail "auth.apiKeys and auth.existingSecret are exclusive: pick one" -}}
{{- end -}}
{{- if and (ne $v.provider.name "scripted") (eq (include "tether.providerKeySource" .) "none") -}}
{{- fail (printf "provider.name=%s needs provider.apiKey or provider.existingSecret" $v.provider.name) -}}
{{- end -}}
{{- if and $v.provider.apiKey $v.provider.existingSecret -}}
{{- fail "provider.apiKey and provider.existingSecret are exclusive: pick one" -}}
{{- end -}}
{{- if and $v.tls.enabled (not $v.tls.secretName) -}}
{{- fail "tls.enabled=true needs tls.secretName (a kubernetes.io/tls Secret)" -}}
{{- end -}}
{{- if eq (int $v.server.grpcPort) (int $v.server.metricsPort) -}}
{{- fail "server.grpcPort and server.metricsPort must differ" -}}
{{- end -}}
{{- if eq (int $v.service.grpcPort) (int $v.service.metricsPort) -}}
{{- fail "service.grpcPort and service.metricsPort must differ" -}}
{{- end -}}
{{- if $v.podDisruptionBudget.enabled -}}
{{- $min := $v.podDisruptionBudget.minAvailable -}}
{{- $max := $v.podDisruptionBudget.maxUnavailable -}}
{{- if eq (include "tether.isSet" $min) (include "tether.isSet" $max) -}}
{{- fail "podDisruptionBudget: set exactly one of minAvailable and maxUnavailable" -}}
{{- end -}}
{{- end -}}
{{- if $v.autoscaling.enabled -}}
{{- if lt (int $v.autoscaling.maxReplicas) (int $v.autoscaling.minReplicas) -}}
{{- fail "autoscaling.maxReplicas must be at least autoscaling.minReplicas" -}}
{{- end -}}
{{- if not (or (include "tether.isSet" $v.autoscaling.targetCPUUtilizationPercentage) (include "tether.isSet" $v.autoscaling.targetMemoryUtilizationPercentage)) -}}
{{- fail "autoscaling needs targetCPUUtilizationPercentage or targetMemoryUtilizationPercentage" -}}
{{- end -}}
{{- end -}}
{{- if and $v.topologySpread.enabled (not $v.topologySpread.topologyKeys) -}}
{{- fail "topologySpread.enabled=true needs at least one topologySpread.topologyKeys entry" -}}
{{- end -}}
{{- end -}}

{{/* The variable that carries a secret MCP header: TETHER_MCP_<SERVER>_<HEADER>. */}}
{{- define "tether.mcpHeaderEnv" -}}
{{- printf "TETHER_MCP_%s_%s" (index . 0) (index . 1) | upper | regexReplaceAll "[^A-Z0-9_]" "_" -}}
{{- end -}}

{{/* TETHER_MCP_SERVERS: the servers as JSON; a secret header becomes {"env": <its variable>}. */}}
{{- define "tether.mcpServersJson" -}}
{{- $servers := list -}}
{{- range $server := .Values.mcp.servers -}}
{{- $entry := omit $server "headers" -}}
{{- if $server.headers -}}
{{- $headers := dict -}}
{{- range $header, $value := $server.headers -}}
{{- if kindIs "map" $value -}}
{{- $_ := set $headers $header (dict "env" (include "tether.mcpHeaderEnv" (list $server.name $header))) -}}
{{- else -}}
{{- $_ := set $headers $header $value -}}
{{- end -}}
{{- end -}}
{{- $_ := set $entry "headers" $headers -}}
{{- end -}}
{{- $servers = append $servers $entry -}}
{{- end -}}
{{- toJson $servers -}}
{{- end -}}

{{/* The variable that carries webhook endpoint i's secret, filled from its secretRef. */}}
{{- define "tether.webhookSecretEnv" -}}
{{- printf "TETHER_WEBHOOK_SECRET_%d" (int .) -}}
{{- end -}}

{{/* TETHER_WEBHOOK_ENDPOINTS: the declared endpoints, each naming its secret's variable. */}}
{{- define "tether.webhookEndpointsJson" -}}
{{- $endpoints := list -}}
{{- range $i, $e := .Values.webhooks.endpoints -}}
{{- $entry := dict "tenant" $e.tenant "endpoint_id" $e.endpointId "url" $e.url -}}
{{- $_ := set $entry "event_types" ($e.eventTypes | default list) -}}
{{- $_ := set $entry "secret_env" (include "tether.webhookSecretEnv" $i) -}}
{{- $endpoints = append $endpoints $entry -}}
{{- end -}}
{{- toJson $endpoints -}}
{{- end -}}
