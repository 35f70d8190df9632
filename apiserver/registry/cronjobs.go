package registry

import (
	"strings"
	"time"

	"listwatch/api"
)

// batchV1 is batch/v1's resources: CronJobs, which Kubernetes' e2e
// "Generated clientset" spec creates, lists, watches and deletes. Ours
// stores and serves them; no controller runs them (kube-controller-manager's
// cronjob-controller makes Jobs from them, and Jobs are not served here).
func batchV1() []*Resource {
	return []*Resource{{
		Group: "batch", Version: "v1", Name: "cronjobs", SingularName: "cronjob",
		Kind: "CronJob", ListKind: "CronJobList", ShortNames: []string{"cj"}, Categories: []string{"all"},
		Namespaced: true, Verbs: AllVerbs, Generation: true,
		ValidateName:   validateCronJobName,
		ValidateFields: validateCronJob,
		Subresources:   []string{SubresourceStatus},
		Default:        defaultCronJob,
		PrepareCreate:  resetStatus(`{}`),
		Columns:        cronJobColumns,
		WideColumns:    cronJobWideColumns,
	}}
}

// Field orders of the batch/v1 structs (k8s.io/api/batch/v1/types.go).
var (
	cronJobSpecOrder = []string{"schedule", "timeZone", "startingDeadlineSeconds", "concurrencyPolicy", "suspend",
		"jobTemplate", "successfulJobsHistoryLimit", "failedJobsHistoryLimit"}
	jobTemplateSpecOrder = []string{"metadata", "spec"}
	jobSpecOrder         = []string{"parallelism", "completions", "activeDeadlineSeconds", "podFailurePolicy",
		"successPolicy", "backoffLimit", "backoffLimitPerIndex", "maxFailedIndexes", "selector", "manualSelector",
		"template", "ttlSecondsAfterFinished", "completionMode", "suspend", "podReplacementPolicy", "managedBy"}
)

// defaultCronJob is SetObjectDefaults_CronJob (pkg/apis/batch/v1,
// zz_generated.defaults.go): SetDefaults_CronJob (concurrencyPolicy
// Allow, suspend false, history limits 3 and 1), then its job template's
// pod spec as every pod template's (podspecdefaults.go). The job
// template's own JobSpec gets no defaults here: SetDefaults_Job runs on
// Jobs only. Its metadata is a struct in Go, so the real server writes
// it, {} when the client sent none.
func defaultCronJob(obj *api.Object) error {
	return defaultSpec(obj, func(spec *members) error {
		spec.setIfZero("concurrencyPolicy", `"Allow"`, cronJobSpecOrder)
		spec.setDefault("suspend", `false`, cronJobSpecOrder)
		spec.setDefault("successfulJobsHistoryLimit", `3`, cronJobSpecOrder)
		spec.setDefault("failedJobsHistoryLimit", `1`, cronJobSpecOrder)
		spec.setDefault("jobTemplate", `{}`, cronJobSpecOrder)
		spec.edit("jobTemplate", func(jt *members) {
			jt.setDefault("metadata", `{}`, jobTemplateSpecOrder)
			jt.setDefault("spec", `{}`, jobTemplateSpecOrder)
			jt.edit("spec", func(js *members) {
				js.setDefault("template", `{}`, jobSpecOrder)
				js.edit("template", defaultPodTemplateSpec)
			})
		})
		return nil
	})
}

// validateCronJobName is ValidateCronJobCreate's rule on top of a DNS
// subdomain: the Jobs a CronJob makes are named after it with an
// 11-character suffix, so its name has at most 63-11 characters.
func validateCronJobName(name string, prefix bool) []string {
	errs := validateDNS1123Subdomain(name, prefix)
	if !prefix && len(name) > 52 {
		errs = append(errs, "must be no more than 52 characters")
	}
	return errs
}

// validateCronJob is the part of validateCronJobSpec
// (pkg/apis/batch/validation/validation.go) that reads fields ours
// stores as sent: a schedule is required (ours does not parse it, nor a
// timeZone), concurrencyPolicy is one of three, the history limits and
// startingDeadlineSeconds are not negative, and the job template's pods
// restart OnFailure or Never (validateJobSpec).
func validateCronJob(obj *api.Object) []api.StatusCause {
	var spec struct {
		Schedule          string `json:"schedule"`
		ConcurrencyPolicy string `json:"concurrencyPolicy"`
		StartingDeadline  *int64 `json:"startingDeadlineSeconds"`
		SuccessfulLimit   *int64 `json:"successfulJobsHistoryLimit"`
		FailedLimit       *int64 `json:"failedJobsHistoryLimit"`
		JobTemplate       struct {
			Spec struct {
				Template struct {
					Spec struct {
						RestartPolicy string `json:"restartPolicy"`
					} `json:"spec"`
				} `json:"template"`
			} `json:"spec"`
		} `json:"jobTemplate"`
	}
	field(obj, &spec, "spec")
	var causes []api.StatusCause
	if spec.Schedule == "" {
		causes = append(causes, api.FieldRequired("spec.schedule", ""))
	}
	for name, n := range map[string]*int64{"startingDeadlineSeconds": spec.StartingDeadline,
		"successfulJobsHistoryLimit": spec.SuccessfulLimit, "failedJobsHistoryLimit": spec.FailedLimit} {
		if n != nil && *n < 0 {
			causes = append(causes, api.FieldInvalid("spec."+name, *n, "must be greater than or equal to 0"))
		}
	}
	switch p := spec.ConcurrencyPolicy; p {
	case "Allow", "Forbid", "Replace":
	case "":
		causes = append(causes, api.FieldRequired("spec.concurrencyPolicy", ""))
	default:
		causes = append(causes, api.FieldNotSupported("spec.concurrencyPolicy", p, []string{"Allow", "Forbid", "Replace"}))
	}
	const restart = "spec.jobTemplate.spec.template.spec.restartPolicy"
	switch p := spec.JobTemplate.Spec.Template.Spec.RestartPolicy; p {
	case "OnFailure", "Never":
	case "", "Always":
		causes = append(causes, api.FieldRequired(restart, `valid values: "OnFailure", "Never"`))
	default:
		causes = append(causes, api.FieldNotSupported(restart, p, []string{"OnFailure", "Never"}))
	}
	return causes
}

// CronJobs' Table is printCronJob's (pkg/printers/internalversion):
// Schedule, Timezone, Suspend, Active (how many Jobs run), Last Schedule,
// then Age, and with -o wide the job template's containers, images and
// selector.
var (
	cronJobColumns = []Column{
		col("Schedule", "The schedule in Cron format, see https://en.wikipedia.org/wiki/Cron.", 0, func(o *api.Object) any {
			var s string
			field(o, &s, "spec", "schedule")
			return s
		}),
		col("Timezone", "The time zone name for the given schedule, see https://en.wikipedia.org/wiki/List_of_tz_database_time_zones. If not specified, this will default to the time zone of the kube-controller-manager process. The set of valid time zone names and the time zone offset is loaded from the system-wide time zone database by the API server during CronJob validation and the controller manager during execution. If no system-wide time zone database can be found a bundled version of the database is used instead. If the time zone name becomes invalid during the lifetime of a CronJob or due to a change in host configuration, the controller will stop creating new new Jobs and will create a system event with the reason UnknownTimeZone. More information can be found in https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/#time-zones", 0,
			func(o *api.Object) any {
				var s string
				field(o, &s, "spec", "timeZone")
				return orNone(s)
			}),
		cronJobSuspendColumn(),
		intColOf("Active", "A list of pointers to currently running jobs.", func(o *api.Object) int64 {
			var active []any
			field(o, &active, "status", "active")
			return int64(len(active))
		}),
		col("Last Schedule", "Information when was the last time the job was successfully scheduled.", 0, func(o *api.Object) any {
			if !hasTimestamp(o, "status", "lastScheduleTime") {
				return none
			}
			// Columns have no clock of their own: the age is taken when
			// the row is printed, as printCronJob's
			// translateTimestampSince does.
			return timestampSince(o, time.Now(), "status", "lastScheduleTime")
		}),
	}
	cronJobWideColumns = []Column{
		col("Containers", "Names of each container in the template.", 1, func(o *api.Object) any {
			return strings.Join(containersOf(o, "name", "spec", "jobTemplate", "spec", "template", "spec", "containers"), ",")
		}),
		col("Images", "Images referenced by each container in the template.", 1, func(o *api.Object) any {
			return strings.Join(containersOf(o, "image", "spec", "jobTemplate", "spec", "template", "spec", "containers"), ",")
		}),
		col("Selector", "A label query over pods that should match the pod count. Normally, the system sets this field for you. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors", 1,
			func(o *api.Object) any {
				var sel labelSelector
				if !field(o, &sel, "spec", "jobTemplate", "spec", "selector") {
					return none
				}
				return sel.String()
			}),
	}
)

// cronJobSuspendColumn is a boolean column whose cells are printBoolPtr's
// strings: True, False or <unset>.
func cronJobSuspendColumn() Column {
	c := col("Suspend", "This flag tells the controller to suspend subsequent executions, it does not apply to already started executions.  Defaults to false.", 0,
		func(o *api.Object) any {
			var b *bool
			if !field(o, &b, "spec", "suspend") || b == nil {
				return "<unset>"
			}
			if *b {
				return "True"
			}
			return "False"
		})
	c.def.Type = "boolean"
	return c
}

// intColOf is an integer column whose cell is computed.
func intColOf(name, description string, cell func(*api.Object) int64) Column {
	c := col(name, description, 0, func(o *api.Object) any { return cell(o) })
	c.def.Type = "integer"
	return c
}
