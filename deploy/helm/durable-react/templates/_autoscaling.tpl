{{/*
Autoscaling of one worker Deployment (.unit: name, roles): a KEDA ScaledObject with one Temporal
trigger per task queue the unit polls (its backlog; the build id under Worker Versioning), or an
HPA on the workers' slot utilisation.
*/}}
{{- define "dreact.autoscaling" -}}
{{- $root := .root -}}
{{- $u := .unit -}}
{{- $name := printf "%s-worker-%s" (include "dreact.fullname" $root) $u.name -}}
{{- $k := mergeOverwrite (deepCopy (omit $root.Values.autoscaling.keda "roles")) (default dict (index $root.Values.autoscaling.keda.roles $u.name)) -}}
{{- $h := mergeOverwrite (deepCopy (omit $root.Values.autoscaling.hpa "roles")) (default dict (index $root.Values.autoscaling.hpa.roles $u.name)) -}}
{{- $t := $root.Values.temporal -}}
{{- if $root.Values.autoscaling.keda.enabled }}
---
apiVersion: keda.sh/v1alpha1
kind: ScaledObject
metadata:
  name: {{ $name }}
  labels:
    {{- include "dreact.labels" $root | nindent 4 }}
    app.kubernetes.io/component: worker-{{ $u.name }}
spec:
  scaleTargetRef:
    name: {{ $name }}
  pollingInterval: {{ $k.pollingInterval }}
  cooldownPeriod: {{ $k.cooldownPeriod }}
  minReplicaCount: {{ $k.minReplicas }}
  maxReplicaCount: {{ $k.maxReplicas }}
  triggers:
    {{- range $role := splitList "," $u.roles }}
    - type: temporal
      name: {{ $role }}-backlog
      metadata:
        endpoint: {{ $t.address | quote }}
        namespace: {{ $t.namespace | quote }}
        taskQueue: {{ (index $root.Values.worker.roles $role).taskQueue | quote }}
        # The workflows role polls workflow tasks; the others poll activity tasks.
        queueTypes: {{ ternary "workflow" "activity" (eq $role "workflows") | quote }}
        targetQueueSize: {{ $k.targetQueueSize | quote }}
        activationTargetQueueSize: {{ $k.activationTargetQueueSize | quote }}
        {{- if $root.Values.worker.deploymentName }}
        workerDeploymentName: {{ $root.Values.worker.deploymentName | quote }}
        workerDeploymentBuildId: {{ default (default $root.Chart.AppVersion $root.Values.image.tag) $root.Values.worker.buildId | quote }}
        {{- end }}
        {{- if $t.tls.serverName }}
        tlsServerName: {{ $t.tls.serverName | quote }}
        {{- end }}
      {{- if or $t.apiKey.existingSecret $t.tls.existingSecret }}
      authenticationRef:
        name: {{ include "dreact.fullname" $root }}-temporal
      {{- end }}
    {{- end }}
{{- else if $root.Values.autoscaling.hpa.enabled }}
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: {{ $name }}
  labels:
    {{- include "dreact.labels" $root | nindent 4 }}
    app.kubernetes.io/component: worker-{{ $u.name }}
spec:
  scaleTargetRef:
    apiVersion: apps/v1
    kind: Deployment
    name: {{ $name }}
  minReplicas: {{ $h.minReplicas }}
  maxReplicas: {{ $h.maxReplicas }}
  metrics:
    - type: Pods
      pods:
        metric:
          name: {{ $h.metricName }}
        target:
          type: AverageValue
          averageValue: {{ $h.targetAverageValue | quote }}
{{- end }}
{{- end -}}
