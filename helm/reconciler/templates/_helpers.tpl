{{/* Chart name, overridable. */}}
{{- define "reconciler.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Full name: the release name, plus the chart name unless the release name already contains it. */}}
{{- define "reconciler.fullname" -}}
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

{{- define "reconciler.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "reconciler.selectorLabels" -}}
app.kubernetes.io/name: {{ include "reconciler.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "reconciler.labels" -}}
helm.sh/chart: {{ include "reconciler.chart" . }}
{{ include "reconciler.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/component: reconciler
{{- end }}

{{- define "reconciler.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "reconciler.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "reconciler.image" -}}
{{- if .Values.image.digest }}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository .Values.image.tag }}
{{- end }}
{{- end }}

{{/*
  The values no default can stand for: a placeholder image, API or repository would deploy a
  pod that pulls nothing or reconciles nothing. All missing ones are named at once.
*/}}
{{- define "reconciler.validate" -}}
{{- $missing := list }}
{{- if not .Values.image.repository }}{{ $missing = append $missing "image.repository (the reconciler image built from the repository's Dockerfile)" }}{{ end }}
{{- if not (or .Values.image.tag .Values.image.digest) }}{{ $missing = append $missing "image.tag or image.digest" }}{{ end }}
{{- if not .Values.api.url }}{{ $missing = append $missing "api.url (the Management API base URL)" }}{{ end }}
{{- if not .Values.gitSync.repo }}{{ $missing = append $missing "gitSync.repo (the manifests repository)" }}{{ end }}
{{- if $missing }}
{{- fail (printf "required values are not set: %s" (join "; " $missing)) }}
{{- end }}
{{- if and (eq .Values.api.auth "oauth") (not .Values.shards) (not .Values.api.oauth.existingSecret) }}
{{- fail "api.auth is oauth: set api.oauth.existingSecret (client id, client secret and refresh token)" }}
{{- end }}
{{- if and (ne .Values.gitSync.auth.method "none") (not .Values.gitSync.auth.existingSecret) }}
{{- fail (printf "gitSync.auth.method is %s: set gitSync.auth.existingSecret" .Values.gitSync.auth.method) }}
{{- end }}
{{- $seen := dict }}
{{- range $i, $shard := .Values.shards }}
{{- if hasKey $seen $shard.name }}
{{- fail (printf "shards[%d].name: %q is used twice; every shard is its own workload" $i $shard.name) }}
{{- end }}
{{- $_ := set $seen $shard.name true }}
{{- if and (eq $.Values.api.auth "oauth") (not (dig "api" "oauth" "existingSecret" "" $shard)) }}
{{- fail (printf "shards[%d] (%s): api.auth is oauth: set shards[%d].api.oauth.existingSecret (each shard has its own credentials)" $i $shard.name $i) }}
{{- end }}
{{- end }}
{{- if and .Values.trigger.enabled (not .Values.trigger.existingSecret) }}
{{- fail "trigger.enabled: set trigger.existingSecret (the Secret holding the bearer token of POST /reconcile)" }}
{{- end }}
{{- end }}

{{/*
  The workloads the chart renders: one without a shard map, else one per shard. Each gets a
  context like the chart's own (.Values, .Release, .Chart, .Files) whose values are the
  chart-wide ones with the shard's overrides merged in, plus .Shard (the shard's name or "").
  Credentials are never inherited: a shard uses only the token or OAuth Secret it names, or
  the Secret named after it.
  An include returns only text, so the caller passes the dict to fill:
  (list $ $shardOrNil $ctx).
*/}}
{{- define "reconciler.instanceContext" -}}
{{- $root := index . 0 }}
{{- $shard := index . 1 }}
{{- $ctx := index . 2 }}
{{- $values := deepCopy $root.Values }}
{{- if $shard }}
{{- $_ := set $values.api.token "existingSecret" "" }}
{{- $_ := set $values.api.token "value" "" }}
{{- $_ := set $values.api.oauth "existingSecret" "" }}
{{- $values = mustMergeOverwrite $values (omit (deepCopy $shard) "name") }}
{{- end }}
{{- $_ := set $ctx "Values" $values }}
{{- $_ := set $ctx "Release" $root.Release }}
{{- $_ := set $ctx "Chart" $root.Chart }}
{{- $_ := set $ctx "Files" $root.Files }}
{{- $_ := set $ctx "Capabilities" $root.Capabilities }}
{{- $_ := set $ctx "Template" $root.Template }}
{{- $_ := set $ctx "Shard" (ternary $shard.name "" (not (empty $shard))) }}
{{- end }}

{{/* Name of one workload and its objects: the full name, plus the shard's name. */}}
{{- define "reconciler.instanceName" -}}
{{- if .Shard }}
{{- printf "%s-%s" (include "reconciler.fullname" .) .Shard | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- include "reconciler.fullname" . }}
{{- end }}
{{- end }}

{{/* Selector of one workload: without shards exactly the chart's (a Deployment's selector
     cannot change on upgrade), with shards the shard's name added. */}}
{{- define "reconciler.instanceSelectorLabels" -}}
{{ include "reconciler.selectorLabels" . }}
{{- if .Shard }}
shard: {{ .Shard }}
{{- end }}
{{- end }}

{{- define "reconciler.instanceLabels" -}}
{{ include "reconciler.labels" . }}
{{- if .Shard }}
shard: {{ .Shard }}
{{- end }}
{{- end }}

{{/* Name of the Secret holding the API token: an existing one, or the one the chart creates. */}}
{{- define "reconciler.tokenSecretName" -}}
{{- default (printf "%s-api-token" (include "reconciler.instanceName" .)) .Values.api.token.existingSecret }}
{{- end }}

{{/* Name of the Secret holding the status view's bearer token: an existing one, the one the
     chart generates (statusView.generateToken, the default), or "" (served on loopback only). */}}
{{- define "reconciler.statusTokenSecretName" -}}
{{- if .Values.statusView.existingSecret }}
{{- .Values.statusView.existingSecret }}
{{- else if .Values.statusView.generateToken }}
{{- printf "%s-status-token" (include "reconciler.instanceName" .) | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}

{{/* Name of the state claim the chart creates for one workload. */}}
{{- define "reconciler.stateClaimName" -}}
{{- printf "%s-state" (include "reconciler.instanceName" .) }}
{{- end }}

{{/* git-sync's --period: a bare number is seconds (`--set gitSync.period=30`), a string a Go duration. */}}
{{- define "reconciler.gitSyncPeriod" -}}
{{- $period := .Values.gitSync.period }}
{{- if or (kindIs "float64" $period) (kindIs "int64" $period) (kindIs "int" $period) }}
{{- printf "%ds" (int $period) }}
{{- else if regexMatch "^[0-9]+$" (toString $period) }}
{{- printf "%ss" (toString $period) }}
{{- else }}
{{- $period }}
{{- end }}
{{- end }}

{{/* Where git-sync publishes the checkout, and the directory the reconciler watches. */}}
{{- define "reconciler.gitRoot" -}}/git{{- end }}
{{- define "reconciler.manifestsDir" -}}
{{- $base := printf "%s/%s" (include "reconciler.gitRoot" .) .Values.gitSync.link }}
{{- if .Values.gitSync.subPath }}
{{- printf "%s/%s" $base (trimAll "/" .Values.gitSync.subPath) }}
{{- else }}
{{- $base }}
{{- end }}
{{- end }}

{{/* The job label Prometheus gives the scraped target: the ServiceMonitor keeps the Service name. */}}
{{- define "reconciler.jobName" -}}
{{- include "reconciler.fullname" . }}
{{- end }}

{{/* git-sync arguments shared by the sidecar and the initial one-time sync. */}}
{{- define "reconciler.gitSyncArgs" -}}
- --repo={{ required "gitSync.repo is required" .Values.gitSync.repo }}
- --ref={{ .Values.gitSync.ref }}
- --root={{ include "reconciler.gitRoot" . }}
- --link={{ .Values.gitSync.link }}
- --depth={{ .Values.gitSync.depth }}
{{- if eq .Values.gitSync.auth.method "token" }}
- --username={{ .Values.gitSync.auth.username }}
- --password-file=/etc/git-secret/token
{{- end }}
{{- if eq .Values.gitSync.auth.method "ssh" }}
- --ssh-key-file=/etc/git-secret/ssh
- --ssh-known-hosts=true
- --ssh-known-hosts-file=/etc/git-secret/known_hosts
{{- end }}
{{- range .Values.gitSync.extraArgs }}
- {{ . }}
{{- end }}
{{- end }}

{{- define "reconciler.gitSyncMounts" -}}
- name: git
  mountPath: {{ include "reconciler.gitRoot" . }}
- name: git-sync-tmp
  mountPath: /tmp
{{- if ne .Values.gitSync.auth.method "none" }}
- name: git-secret
  mountPath: /etc/git-secret
  readOnly: true
{{- end }}
{{- end }}

{{/*
  Seconds in a Prometheus duration such as 36h or 1d12h (the schema admits s, m, h, d, w):
  alert thresholds compare against `time() - <timestamp>`, a number of seconds.
*/}}
{{- define "reconciler.durationSeconds" -}}
{{- $factors := dict "s" 1 "m" 60 "h" 3600 "d" 86400 "w" 604800 }}
{{- $total := 0 }}
{{- range $part := regexFindAll "[0-9]+[smhdw]" . -1 }}
{{- $unit := regexFind "[smhdw]$" $part }}
{{- $total = add $total (mul (trimSuffix $unit $part | atoi) (get $factors $unit)) }}
{{- end }}
{{- $total }}
{{- end }}
