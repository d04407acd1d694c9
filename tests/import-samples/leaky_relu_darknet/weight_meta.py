class Program_weight_tensor_meta_in_0:
	name = "in_0"
	original_name = "in_0"
	shape = [2, 8, 12, 12]
	dtype = "torch.float32"
	device = "cuda:0"
	mean = 0.0
	std = 1.0
	data = None


class Program_weight_tensor_meta_in_1:
	name = "in_1"
	original_name = "in_1"
	shape = [16, 8, 3, 3]
	dtype = "torch.float32"
	device = "cuda:0"
	mean = 0.0
	std = 0.5
	data = None


class Program_weight_tensor_meta_in_2:
	name = "in_2"
	original_name = "in_2"
	shape = [16]
	dtype = "torch.float32"
	device = "cuda:0"
	mean = 0.0
	std = 0.5
	data = None


class Program_weight_tensor_meta_in_3:
	name = "in_3"
	original_name = "in_3"
	shape = [16]
	dtype = "torch.float32"
	device = "cuda:0"
	mean = 1.0
	std = 0.5
	data = None


class Program_weight_tensor_meta_in_4:
	name = "in_4"
	original_name = "in_4"
	shape = [16]
	dtype = "torch.float32"
	device = "cuda:0"
	mean = 0.0
	std = 0.5
	data = None


class Program_weight_tensor_meta_in_5:
	name = "in_5"
	original_name = "in_5"
	shape = [16]
	dtype = "torch.float32"
	device = "cuda:0"
	mean = 1.0
	std = 0.5
	data = None


