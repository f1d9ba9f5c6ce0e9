module tablebay/clients/go-tables

go 1.21

require github.com/aliyun/alibabacloud-oss-go-sdk-v2 v1.6.1

require golang.org/x/time v0.4.0 // indirect
