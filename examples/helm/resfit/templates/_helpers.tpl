{{/*
resfit.labels are the labels of every object the chart makes: its part of
resfit and the version it runs. The argument is the component.
*/}}
{{- define "resfit.labels" -}}
app.kubernetes.io/part-of: resfit
app.kubernetes.io/component: {{ .component }}
app.kubernetes.io/version: {{ .root.Chart.AppVersion | quote }}
{{- end }}

{{/*
resfit.image is an image's reference: its repository, and its tag or else
the chart's appVersion. The argument is the image's values and the root.
*/}}
{{- define "resfit.image" -}}
{{ .image.repository }}:{{ .image.tag | default .root.Chart.AppVersion }}
{{- end }}

{{/*
resfit.profile is the scheduler's profile, without its schedulerName: the
chart's profiles/<profile>.yaml, or customProfile for profile: custom.
*/}}
{{- define "resfit.profile" -}}
{{- $s := .Values.scheduler -}}
{{- if eq $s.profile "custom" -}}
{{- if not $s.customProfile -}}
{{- fail "scheduler.customProfile: Required value: profile: custom runs the profile given here" -}}
{{- end -}}
{{ toYaml $s.customProfile }}
{{- else -}}
{{- $file := printf "profiles/%s.yaml" $s.profile -}}
{{- $text := .Files.Get $file -}}
{{- if not $text -}}
{{- fail (printf "scheduler.profile: Unsupported value: %q: supported values: \"ResfitFrag\", \"ResourceStrategyFit\", \"NodeResourcesFitPlus\", \"custom\"" $s.profile) -}}
{{- end -}}
{{ $text }}
{{- end -}}
{{- end }}

{{/*
resfit.validate fails on values the schema cannot word: a scheduler named
as the cluster's own (its name and lease), a custom profile that names its
scheduler, and extra arguments that would say again what the chart says.
*/}}
{{- define "resfit.validate" -}}
{{- $name := .Values.scheduler.name -}}
{{- if has $name (list "kube-scheduler" "default-scheduler") -}}
{{- fail (printf "scheduler.name: Invalid value: %q: the cluster scheduler's name and lease; name a scheduler of its own" $name) -}}
{{- end -}}
{{- if hasKey .Values.scheduler.customProfile "schedulerName" -}}
{{- fail "scheduler.customProfile.schedulerName: Forbidden: the chart names the profile scheduler.name" -}}
{{- end -}}
{{- range $key := list "mode" "configMap" "configFile" "profile" -}}
{{- if hasKey $.Values.descheduler.extraArgs $key -}}
{{- fail (printf "descheduler.extraArgs.%s: Forbidden: the chart sets it (descheduler.mode, and the scheduler's ConfigMap and profile)" $key) -}}
{{- end -}}
{{- end -}}
{{- end }}
