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
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}
{{- end }}

{{/* Name of the Secret holding the API token: an existing one, or the one the chart creates. */}}
{{- define "reconciler.tokenSecretName" -}}
{{- default (printf "%s-api-token" (include "reconciler.fullname" .)) .Values.api.token.existingSecret }}
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
