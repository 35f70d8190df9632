module listwatch

go 1.26.0

require (
	github.com/evanphx/json-patch/v5 v5.9.11
	github.com/stretchr/testify v1.12.1
	go.yaml.in/yaml/v3 v3.0.5
	golang.org/x/net v0.62.0
	google.golang.org/protobuf v1.36.12
)

require golang.org/x/text v0.43.0 // indirect
