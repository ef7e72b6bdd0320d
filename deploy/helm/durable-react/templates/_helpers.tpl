{{/* Names and labels. */}}
{{- define "dreact.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}{{ .Release.Name | trunc 50 | trimSuffix "-" }}{{- else -}}{{ printf "%s-%s" .Release.Name .Chart.Name | trunc 50 | trimSuffix "-" }}{{- end -}}
{{- end -}}

{{- define "dreact.labels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "dreact.selector" -}}
app.kubernetes.io/name: {{ .root.Chart.Name }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{- define "dreact.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}{{ default (include "dreact.fullname" .) .Values.serviceAccount.name }}{{- else -}}{{ default "default" .Values.serviceAccount.name }}{{- end -}}
{{- end -}}

{{- define "dreact.image" -}}
{{ .image.repository }}:{{ default .root.Chart.AppVersion .image.tag }}
{{- end -}}

{{/* The roles a worker Deployment runs: one role, or all four. */}}
{{- define "dreact.roleNames" -}}workflows,models,tools,exec{{- end -}}

{{- define "dreact.graceSeconds" -}}
{{- $grace := int .Values.worker.shutdownGraceSeconds -}}
{{- $margin := int .Values.worker.terminationGraceMarginSeconds -}}
{{- if le $margin 0 -}}{{- fail "worker.terminationGraceMarginSeconds must be above 0: the pod's terminationGracePeriodSeconds must exceed DREACT_SHUTDOWN_GRACE_SECONDS, or the kubelet kills in-flight activities mid-drain" -}}{{- end -}}
{{- add $grace $margin -}}
{{- end -}}

{{/* Required settings: a clear error naming the value. */}}
{{- define "dreact.validate" -}}
{{- if not .Values.database.existingSecret -}}{{- fail "database.existingSecret is required: a Secret whose key database.key holds the Postgres URL" -}}{{- end -}}
{{- if and (not .Values.temporal.address) (not .Values.temporal.envconfig.existingSecret) (not .Values.temporal.envconfig.existingConfigMap) -}}{{- fail "temporal.address (or temporal.envconfig.existingSecret / existingConfigMap) is required" -}}{{- end -}}
{{- if not (has .Values.worker.mode (list "roles" "all")) -}}{{- fail (printf "worker.mode must be roles or all, got %q" .Values.worker.mode) -}}{{- end -}}
{{- if not (has .Values.exec.backend (list "local" "docker" "fargate" "off")) -}}{{- fail (printf "exec.backend must be local, docker, fargate or off, got %q" .Values.exec.backend) -}}{{- end -}}
{{- if and .Values.autoscaling.keda.enabled .Values.autoscaling.hpa.enabled -}}{{- fail "autoscaling.keda.enabled and autoscaling.hpa.enabled: choose one (KEDA makes its own HPA)" -}}{{- end -}}
{{- if and .Values.autoscaling.keda.enabled (not .Values.temporal.address) -}}{{- fail "autoscaling.keda needs temporal.address (the scaler connects to Temporal itself)" -}}{{- end -}}
{{- if and .Values.gateway.enabled (gt (int .Values.gateway.replicas) 1) (not .Values.gateway.tokenSecret.existingSecret) -}}{{- fail "gateway.tokenSecret.existingSecret is required with more than one gateway replica (stream tokens must verify on every replica)" -}}{{- end -}}
{{- end -}}

{{/* The Temporal connection and Postgres, as environment variables (values from Secrets by reference). */}}
{{- define "dreact.connectionEnv" -}}
{{- $t := .Values.temporal -}}
{{- if $t.address }}
- name: TEMPORAL_ADDRESS
  value: {{ $t.address | quote }}
{{- end }}
- name: TEMPORAL_NAMESPACE
  value: {{ $t.namespace | quote }}
{{- if $t.apiKey.existingSecret }}
- name: TEMPORAL_API_KEY
  valueFrom:
    secretKeyRef: { name: {{ $t.apiKey.existingSecret | quote }}, key: {{ $t.apiKey.key | quote }} }
{{- end }}
{{- if $t.tls.existingSecret }}
- name: TEMPORAL_TLS_CLIENT_CERT_PATH
  value: /etc/dreact/temporal-tls/{{ $t.tls.certKey }}
- name: TEMPORAL_TLS_CLIENT_KEY_PATH
  value: /etc/dreact/temporal-tls/{{ $t.tls.keyKey }}
{{- if $t.tls.caKey }}
- name: TEMPORAL_TLS_SERVER_CA_CERT_PATH
  value: /etc/dreact/temporal-tls/{{ $t.tls.caKey }}
{{- end }}
{{- end }}
{{- if $t.tls.serverName }}
- name: TEMPORAL_TLS_SERVER_NAME
  value: {{ $t.tls.serverName | quote }}
{{- end }}
{{- if or $t.envconfig.existingSecret $t.envconfig.existingConfigMap }}
- name: TEMPORAL_CONFIG_FILE
  value: /etc/dreact/temporal/{{ $t.envconfig.key }}
{{- if $t.envconfig.profile }}
- name: TEMPORAL_PROFILE
  value: {{ $t.envconfig.profile | quote }}
{{- end }}
{{- end }}
- name: DATABASE_URL
  valueFrom:
    secretKeyRef: { name: {{ .Values.database.existingSecret | quote }}, key: {{ .Values.database.key | quote }} }
- name: DREACT_DB_SCHEMA
  value: {{ .Values.database.schema | quote }}
- name: DREACT_HOME
  value: /var/lib/dreact
- name: TMPDIR
  value: /tmp
{{- end -}}

{{- define "dreact.connectionMounts" -}}
{{- $t := .Values.temporal -}}
{{- if $t.tls.existingSecret }}
- name: temporal-tls
  mountPath: /etc/dreact/temporal-tls
  readOnly: true
{{- end }}
{{- if or $t.envconfig.existingSecret $t.envconfig.existingConfigMap }}
- name: temporal-envconfig
  mountPath: /etc/dreact/temporal
  readOnly: true
{{- end }}
- name: tmp
  mountPath: /tmp
{{- end -}}

{{- define "dreact.connectionVolumes" -}}
{{- $t := .Values.temporal -}}
{{- if $t.tls.existingSecret }}
- name: temporal-tls
  secret: { secretName: {{ $t.tls.existingSecret | quote }}, defaultMode: 0400 }
{{- end }}
{{- if $t.envconfig.existingSecret }}
- name: temporal-envconfig
  secret: { secretName: {{ $t.envconfig.existingSecret | quote }}, defaultMode: 0400 }
{{- else if $t.envconfig.existingConfigMap }}
- name: temporal-envconfig
  configMap: { name: {{ $t.envconfig.existingConfigMap | quote }} }
{{- end }}
- name: tmp
  emptyDir: { sizeLimit: {{ .Values.worker.tmpSizeLimit }} }
{{- end -}}

{{/* Plain environment variables from a map (sorted). */}}
{{- define "dreact.envMap" -}}
{{- range $k, $v := . }}
- name: {{ $k }}
  value: {{ $v | toString | quote }}
{{- end }}
{{- end -}}
