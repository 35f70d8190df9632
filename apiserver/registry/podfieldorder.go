package registry

// Field orders of the core/v1 structs that pod defaulting writes into,
// as their json tags come in k8s.io/api v0.37.2 core/v1/types.go. A
// default lands before the first member that comes after it here, so a
// defaulted Pod reads in the order kube-apiserver writes it. Embedded
// structs (a Probe's ProbeHandler, a Volume's VolumeSource) are inline.
var (
	podSpecOrder = []string{"volumes", "initContainers", "containers", "ephemeralContainers", "restartPolicy",
		"terminationGracePeriodSeconds", "activeDeadlineSeconds", "dnsPolicy", "nodeSelector", "serviceAccountName",
		"serviceAccount", "automountServiceAccountToken", "nodeName", "hostNetwork", "hostPID", "hostIPC",
		"shareProcessNamespace", "securityContext", "imagePullSecrets", "hostname", "subdomain", "affinity",
		"schedulerName", "tolerations", "hostAliases", "priorityClassName", "priority", "dnsConfig", "readinessGates",
		"runtimeClassName", "enableServiceLinks", "preemptionPolicy", "overhead", "topologySpreadConstraints",
		"setHostnameAsFQDN", "os", "hostUsers", "schedulingGates", "resourceClaims", "resources", "hostnameOverride",
		"workloadRef", "schedulingGroup", "evictionResponders"}
	containerOrder = []string{"name", "image", "command", "args", "workingDir", "ports", "envFrom", "env",
		"resources", "resizePolicy", "restartPolicy", "restartPolicyRules", "volumeMounts", "volumeDevices",
		"livenessProbe", "readinessProbe", "startupProbe", "lifecycle", "terminationMessagePath",
		"terminationMessagePolicy", "imagePullPolicy", "securityContext", "stdin", "stdinOnce", "tty"}
	containerPortOrder = []string{"name", "hostPort", "containerPort", "protocol", "hostIP"}
	resourcesOrder     = []string{"limits", "requests", "claims"}
	probeOrder         = []string{"exec", "httpGet", "tcpSocket", "grpc", "initialDelaySeconds", "timeoutSeconds",
		"periodSeconds", "successThreshold", "failureThreshold", "terminationGracePeriodSeconds"}
	httpGetOrder    = []string{"path", "port", "host", "scheme", "httpHeaders", "protocol"}
	grpcOrder       = []string{"port", "service", "mode"}
	fieldRefOrder   = []string{"apiVersion", "fieldPath"}
	fileKeyRefOrder = []string{"volumeName", "path", "key", "optional"}
	// volumeSources are a Volume's sources, the members of its inline
	// VolumeSource, after "name".
	volumeSources = []string{"hostPath", "emptyDir", "gcePersistentDisk", "awsElasticBlockStore", "gitRepo",
		"secret", "nfs", "iscsi", "glusterfs", "persistentVolumeClaim", "rbd", "flexVolume", "cinder", "cephfs",
		"flocker", "downwardAPI", "fc", "azureFile", "configMap", "vsphereVolume", "quobyte", "azureDisk",
		"photonPersistentDisk", "projected", "portworxVolume", "scaleIO", "storageos", "csi", "ephemeral", "image"}
	volumeOrder          = append([]string{"name"}, volumeSources...)
	hostPathOrder        = []string{"path", "type"}
	secretVolumeOrder    = []string{"secretName", "items", "defaultMode", "optional", "defaultUser"}
	configMapVolumeOrder = []string{"name", "items", "defaultMode", "optional", "defaultUser"}
	downwardAPIOrder     = []string{"items", "defaultMode", "defaultUser"}
	projectedOrder       = []string{"sources", "defaultMode", "defaultUser"}
	tokenProjectionOrder = []string{"audience", "expirationSeconds", "path", "user"}
	iscsiOrder           = []string{"targetPortal", "iqn", "lun", "iscsiInterface", "fsType", "readOnly", "portals", "chapAuthDiscovery", "chapAuthSession", "secretRef", "initiatorName"}
	rbdOrder             = []string{"monitors", "image", "fsType", "pool", "user", "keyring", "secretRef", "readOnly"}
	azureDiskOrder       = []string{"diskName", "diskURI", "cachingMode", "fsType", "readOnly", "kind"}
	scaleIOOrder         = []string{"gateway", "system", "secretRef", "sslEnabled", "protectionDomain", "storagePool", "storageMode", "volumeName", "fsType", "readOnly"}
	pvcSpecOrder         = []string{"accessModes", "selector", "resources", "volumeName", "storageClassName", "volumeMode", "dataSource", "dataSourceRef", "volumeAttributesClassName"}
	imageVolumeOrder     = []string{"reference", "pullPolicy"}
	podTemplateSpecOrder = []string{"metadata", "spec"}
	podStatusOrder       = []string{"observedGeneration", "phase", "conditions", "message", "reason", "nominatedNodeName", "hostIP", "hostIPs", "podIP", "podIPs", "startTime", "initContainerStatuses", "containerStatuses", "qosClass"}
)
