package objstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/kbatch-dev/kbatch/offsets"
)

// s3Bucket reads an S3 bucket with the AWS SDK's S3 client, whose default
// chain gives the credentials (AWS_ACCESS_KEY_ID…, AWS_PROFILE and the
// shared files, SSO, web identity, the ECS and EC2 roles), the region and
// the endpoint (AWS_ENDPOINT_URL_S3). The SDK's config, credential and STS
// packages are linked into kbatch anyway, by MSK IAM; the S3 client adds
// 5.3 MB to the binary (measured on linux/amd64; gocloud.dev's s3blob
// linked the same client). Its retries are the SDK's standard ones.
type s3Bucket struct {
	name   string
	client *s3.Client
}

// openS3 returns the bucket of an s3:// URL of Translate's. The query may
// say region=, endpoint=, use_path_style=, profile= and anonymous= (as
// gocloud.dev's s3blob took them); anything else is a usage error. It
// reads the shared config files but sends nothing: the credentials are
// resolved by the first request.
func openS3(ctx context.Context, u *url.URL) (*s3Bucket, error) {
	var loads []func(*config.LoadOptions) error
	var endpoint string
	var pathStyle bool
	q := u.Query()
	for _, k := range slices.Sorted(maps.Keys(q)) {
		v := q[k][len(q[k])-1]
		if len(q[k]) > 1 {
			return nil, &offsets.UsageError{Msg: fmt.Sprintf("%s= is given %d times", offsets.SafeName(k), len(q[k]))}
		}
		switch k {
		case "region":
			loads = append(loads, config.WithRegion(v))
		case "profile":
			loads = append(loads, config.WithSharedConfigProfile(v))
		case "endpoint":
			endpoint = v
		case "use_path_style", "anonymous":
			b, err := strconv.ParseBool(v)
			if err != nil {
				return nil, &offsets.UsageError{Msg: fmt.Sprintf("%s=%s: want true or false", k, offsets.SafeName(v))}
			}
			if k == "use_path_style" {
				pathStyle = b
			} else if b {
				loads = append(loads, config.WithCredentialsProvider(aws.AnonymousCredentials{}))
			}
		default:
			return nil, &offsets.UsageError{Msg: fmt.Sprintf("unknown query parameter %s (s3:// takes region, endpoint, use_path_style, profile and anonymous)", offsets.SafeName(k))}
		}
	}
	cfg, err := config.LoadDefaultConfig(ctx, loads...)
	if err != nil {
		return nil, fmt.Errorf("AWS configuration: %w", err)
	}
	if cfg.Region == "" {
		return nil, errors.New("no AWS region: set AWS_REGION, a region in the profile, or region= on the URL")
	}
	client := s3.NewFromConfig(cfg, func(o *s3.Options) {
		if endpoint != "" {
			o.BaseEndpoint = aws.String(endpoint)
		}
		o.UsePathStyle = pathStyle
	})
	return &s3Bucket{name: u.Host, client: client}, nil
}

func (b *s3Bucket) list(ctx context.Context, prefix, token string, pageSize int) ([]object, string, error) {
	in := &s3.ListObjectsV2Input{
		Bucket:    aws.String(b.name),
		Prefix:    aws.String(prefix),
		Delimiter: aws.String("/"),
		MaxKeys:   aws.Int32(int32(pageSize)),
	}
	if token != "" {
		in.ContinuationToken = aws.String(token)
	}
	out, err := b.client.ListObjectsV2(ctx, in)
	if err != nil {
		return nil, "", s3Error(err)
	}
	var objs []object
	for _, o := range out.Contents {
		objs = append(objs, object{key: aws.ToString(o.Key), modTime: aws.ToTime(o.LastModified)})
	}
	for _, p := range out.CommonPrefixes {
		objs = append(objs, object{key: aws.ToString(p.Prefix), dir: true})
	}
	next := ""
	if aws.ToBool(out.IsTruncated) {
		next = aws.ToString(out.NextContinuationToken)
	}
	return objs, next, nil
}

func (b *s3Bucket) read(ctx context.Context, key string) (io.ReadCloser, int64, error) {
	out, err := b.client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(b.name), Key: aws.String(key)})
	if err != nil {
		return nil, 0, s3Error(err)
	}
	size := int64(-1)
	if out.ContentLength != nil {
		size = *out.ContentLength
	}
	return out.Body, size, nil
}

func (b *s3Bucket) stat(ctx context.Context, key string) (time.Time, error) {
	out, err := b.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(b.name), Key: aws.String(key)})
	if err != nil {
		return time.Time{}, s3Error(err)
	}
	return aws.ToTime(out.LastModified), nil
}

// s3Error makes a 404 (NoSuchKey, NoSuchBucket, a HEAD's bare NotFound)
// wrap fs.ErrNotExist.
func s3Error(err error) error {
	var status interface{ HTTPStatusCode() int }
	if errors.As(err, &status) && status.HTTPStatusCode() == 404 {
		return fmt.Errorf("%w (%v)", fs.ErrNotExist, err)
	}
	return err
}
