package yamljson

import (
	"fmt"
	"math"
	"reflect"
	"strconv"
)

// jsonKey is the JSON member name of a YAML key, converted as
// sigs.k8s.io/yaml's convertToJSONableObject converts it; v is the key's
// value, which its error quotes.
func jsonKey(k, v any) (string, error) {
	switch k := k.(type) {
	case string:
		return k, nil
	case int:
		return strconv.Itoa(k), nil
	case int64:
		return strconv.FormatInt(k, 10), nil
	case uint64:
		return strconv.FormatUint(k, 10), nil
	case float64:
		switch {
		case math.IsInf(k, 1):
			return ".inf", nil
		case math.IsInf(k, -1):
			return "-.inf", nil
		case math.IsNaN(k):
			return ".nan", nil
		}
		return strconv.FormatFloat(k, 'g', -1, 32), nil
	case bool:
		return strconv.FormatBool(k), nil
	}
	return "", fmt.Errorf("unsupported map key of type: %s, key: %+#v, value: %+#v", reflect.TypeOf(k), k, v2Form(v))
}
