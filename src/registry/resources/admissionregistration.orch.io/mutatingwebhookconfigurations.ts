// MutatingWebhookConfiguration (admissionregistration.orch.io/v1, cluster-scoped): the validating one's resource with
// the mutating fields (reinvocationPolicy).
import { webhookConfigurationResource } from './validatingwebhookconfigurations.js'

export default webhookConfigurationResource('MutatingWebhookConfiguration', true)
